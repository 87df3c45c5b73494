// `edgework doctor`: what production will refuse or lack, read from the project's
// wrangler configuration, .dev.vars names, triggers.yaml and worker files — and, given a
// token (--token or CLOUDFLARE_API_TOKEN; never required), from the account. One line per
// problem with its fix; exit code 1 when there is one.
import { accountApi, readAccount } from "./doctor/account.mjs";
import { diagnose } from "./doctor/checks.mjs";
import { readProject } from "./doctor/project.mjs";
import { importTs } from "./import-ts.mjs";

const API_BASE = "https://api.cloudflare.com/client/v4";

function option(args, name) {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (!value || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return value;
}

/**
 * Runs the checks on `project`; returns the report's lines and the problems found.
 * @param {{ project: string; args?: string[]; env?: Record<string, string | undefined>; fetch?: typeof globalThis.fetch }} options
 */
export async function doctor({ project, args = [], env = process.env, fetch = globalThis.fetch }) {
  const token = option(args, "--token") ?? env.CLOUDFLARE_API_TOKEN;
  const read = await readProject(project);
  let account = null;
  if (token && read.config) {
    const api = accountApi({ token, apiBase: option(args, "--api-base") ?? env.CLOUDFLARE_API_BASE_URL ?? API_BASE, fetch });
    const from = read.config.vars?.APPROVAL_FROM;
    account = await readAccount(api, {
      accountId: option(args, "--account-id") ?? read.config.account_id ?? env.CLOUDFLARE_ACCOUNT_ID,
      script: read.config.name,
      sendingDomain: typeof from === "string" && from.includes("@") ? from.split("@").pop().toLowerCase() : undefined,
    });
  }
  const found = account?.error ? { ...diagnose(read, null), accountError: account.error } : diagnose(read, account);
  const lines = [
    `edgework doctor: ${read.file ?? "no wrangler configuration"}${read.config?.name ? ` (${read.config.name})` : ""}${account && !account.error ? ", with the account" : ""}`,
  ];
  for (const p of found.problems) lines.push(`✗ ${p.what}\n    fix: ${p.fix}`);
  for (const a of found.advice) lines.push(`! ${a}`);
  if (found.accountError) lines.push(`· the account could not be read: ${found.accountError}`);
  if (found.unchecked.length)
    lines.push(`· not checked${token ? "" : " without a token (--token or CLOUDFLARE_API_TOKEN)"}:`, ...found.unchecked.map((u) => `    ${u}`));
  lines.push(
    found.problems.length
      ? `${found.problems.length} problem${found.problems.length === 1 ? "" : "s"} production will refuse or lack.`
      : "No problem found: this configuration has what a deploy needs.",
  );
  // The project's files (a cloned repository's worker files, addresses, trigger names) are not ours: never an escape sequence to the terminal.
  const { terminalText } = await importTs("terminal-text", 'export { terminalText } from "./src/evals/terminal-text";');
  return { lines: lines.map((l) => terminalText(l, true)), problems: found.problems };
}

export async function doctorCommand(args) {
  const { lines, problems } = await doctor({ project: process.cwd(), args });
  console.log(lines.join("\n"));
  if (problems.length) process.exitCode = 1;
}
