// `edgework dev` (`npm run dev`): wrangler dev in the strict local mode (src/email/strict-local.ts;
// docs/operate.md, "Local dev as strict as production") unless .dev.vars or a `--var STRICT_LOCAL:…`
// says otherwise, after saying which of production's rules it enforces (dev-rules.mjs).
// Arguments go on to wrangler dev.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { devBanner, devVars, strictLocal } from "./dev-rules.mjs";

export function devCommand(args) {
  const vars = devVars();
  const { strict, given } = strictLocal(args, vars);
  console.log(devBanner({ strict }));
  if (strict) {
    const recipients = (args.find((a) => a.startsWith("EMAIL_ALLOWED_RECIPIENTS:"))?.slice(25) ?? vars.EMAIL_ALLOWED_RECIPIENTS ?? "").trim();
    console.log(
      `Mail goes only to EMAIL_ALLOWED_RECIPIENTS: ${recipients || "none set, so every send is refused, as production refuses an unverified address"}.`,
    );
  }
  // The project's wrangler, run by this Node (no PATH or shell needed).
  const wrangler = createRequire(join(process.cwd(), "package.json")).resolve("wrangler/bin/wrangler.js");
  const child = spawn(process.execPath, [wrangler, "dev", ...(given === undefined ? ["--var", "STRICT_LOCAL:true"] : []), ...args], { stdio: "inherit" });
  // Ctrl-C reaches wrangler too (same process group): wait for it to stop, then leave with its code.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve(process.exit(code ?? (signal ? 1 : 0)))));
}
