// What `npm run dev` (local workerd, `edgework dev`) enforces of production's rules, said at its
// start. The one list of them: whoever makes local dev emulate a rule says here what does it
// (docs/operate.md, "Local dev as strict as production", lists the same rules for readers).
import { existsSync, readFileSync } from "node:fs";

/**
 * Production's rules. `by`: what enforces it locally (null: nothing yet); `strict`: only in
 * the strict local mode (STRICT_LOCAL=true, `edgework dev`'s default).
 */
export const RULES = [
  { rule: "SQLite LIKE/GLOB patterns of at most 50 bytes", by: "workerd itself" },
  {
    rule: "send_email delivers only to verified destination addresses, unless the sending domain is onboarded to Email Sending",
    by: "the strict local mode: only EMAIL_ALLOWED_RECIPIENTS get mail",
    strict: true,
  },
  { rule: "Email Sending replaces the Message-ID of outgoing mail", by: "the strict local mode", strict: true },
  { rule: "at most six connections wait for response headers at once per invocation", by: "edgework's connection line, always on (production too)" },
  {
    rule: "a failing alarm (thrown, or ended by a limit without a catch) is retried about six times, then dropped, leaving its run queued or running with no alarm",
    by: "workerd itself retries and drops it, and the run index's stuck-run sweep finds the run as deployed; the test pool kills activations on purpose, TestRunDO killActivations",
  },
  { rule: "CPU time ([limits] cpu_ms), 128 MB of memory and an alarm's 15-minute wall time end a handler without a catch", by: null },
  { rule: "Workers Free: 10 ms CPU and 50 subrequests per invocation", by: null },
];

/** KEY=value lines of `.dev.vars` in `dir` (quotes around a value dropped); comments and other lines ignored. */
export function devVars(dir = ".") {
  const file = `${dir}/.dev.vars`;
  if (!existsSync(file)) return {};
  const vars = {};
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) vars[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return vars;
}

/** STRICT_LOCAL as `edgework dev` runs: a `--var STRICT_LOCAL:…` argument, else .dev.vars, else on. */
export function strictLocal(args = [], vars = devVars()) {
  const given = args.find((a) => a.startsWith("STRICT_LOCAL:"))?.slice("STRICT_LOCAL:".length) ?? vars.STRICT_LOCAL;
  return { strict: given === undefined || given === "true", given };
}

/** The banner: plainly whether dev is as strict as production, and rule by rule. */
export function devBanner({ strict = true } = {}) {
  const enforced = (r) => r.by !== null && (!r.strict || strict);
  const missing = RULES.filter((r) => !enforced(r));
  const lines = [
    missing.length
      ? `edgework dev: local workerd is NOT as strict as Cloudflare${strict ? "" : " (strict local mode OFF: STRICT_LOCAL=false)"}. These production rules are not enforced here:`
      : "edgework dev: every production rule edgework knows of is enforced here.",
    ...missing.map((r) => `  ✗ ${r.rule}`),
  ];
  const here = RULES.filter(enforced);
  if (here.length) lines.push("Enforced here as in production:", ...here.map((r) => `  ✓ ${r.rule} (${r.by})`));
  lines.push("Before a deploy: npx edgework doctor (what production will refuse or lack; docs/operate.md).");
  return lines.join("\n");
}
