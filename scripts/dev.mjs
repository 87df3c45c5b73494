// `npm run dev`: wrangler dev in the strict local mode (src/email/strict-local.ts; docs/operate.md,
// "Local dev as strict as production") unless .dev.vars or a `--var STRICT_LOCAL:…` says otherwise,
// and says at start which it is. Arguments go on to wrangler dev.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** KEY=value lines of .dev.vars (quotes around a value dropped); comments and other lines ignored. */
function devVars() {
  if (!existsSync(".dev.vars")) return {};
  const vars = {};
  for (const line of readFileSync(".dev.vars", "utf8").split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) vars[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return vars;
}

const args = process.argv.slice(2);
const vars = devVars();
const given = args.find((a) => a.startsWith("STRICT_LOCAL:"))?.slice("STRICT_LOCAL:".length) ?? vars.STRICT_LOCAL;
const strict = given === undefined || given === "true";
const recipients = (
  args.find((a) => a.startsWith("EMAIL_ALLOWED_RECIPIENTS:"))?.slice("EMAIL_ALLOWED_RECIPIENTS:".length) ??
  vars.EMAIL_ALLOWED_RECIPIENTS ??
  ""
).trim();

console.log(
  strict
    ? `edgework dev: strict local mode ON (as production): mail goes only to EMAIL_ALLOWED_RECIPIENTS (${recipients || "none set: every send is refused, as production refuses an unverified address"}); our Message-IDs are replaced on send. STRICT_LOCAL=false in .dev.vars turns it off.`
    : `edgework dev: strict local mode OFF (STRICT_LOCAL=${given}): local workerd mails anyone and keeps our Message-IDs; production does neither (docs/operate.md).`,
);

// The project's wrangler, run by this Node (no PATH or shell needed).
const wrangler = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
const child = spawn(process.execPath, [wrangler, "dev", ...(given === undefined ? ["--var", "STRICT_LOCAL:true"] : []), ...args], { stdio: "inherit" });
// Ctrl-C reaches wrangler too (same process group): wait for it to stop, then leave with its code.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
