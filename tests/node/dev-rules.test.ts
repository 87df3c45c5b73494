import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { devBanner, RULES, strictLocal } from "../../cli/dev-rules.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("npm run dev says at start which production rules it does not enforce", () => {
  it("the repository's and the template's dev scripts run edgework dev, which prints the banner before wrangler dev", () => {
    for (const file of ["package.json", "create-edgework/template/package.json"]) {
      const dev = (JSON.parse(readFileSync(`${root}${file}`, "utf8")) as { scripts: { dev: string } }).scripts.dev;
      expect(dev, file).toMatch(/edgework(\.mjs)? dev$/);
    }
  });

  type Rule = { rule: string; by: string | null; strict?: boolean };
  it("names every rule from the one list, plainly saying dev is not as strict while any is not emulated; the strict mode's rules by the mode", () => {
    const out = execFileSync("node", ["bin/edgework.mjs", "dev-rules", "STRICT_LOCAL:true"], { cwd: root, encoding: "utf8" });
    expect(out).toBe(`${devBanner({ strict: true })}\n`);
    for (const r of RULES as Rule[]) expect(out).toContain(`${r.by ? "✓" : "✗"} ${r.rule}`);
    if ((RULES as Rule[]).some((r) => !r.by)) expect(out).toMatch(/^edgework dev: local workerd is NOT as strict as Cloudflare\./);
    const off = execFileSync("node", ["bin/edgework.mjs", "dev-rules", "STRICT_LOCAL:false"], { cwd: root, encoding: "utf8" });
    expect(off).toMatch(/strict local mode OFF/);
    for (const r of (RULES as Rule[]).filter((x) => x.strict)) expect(off).toContain(`✗ ${r.rule}`);
    expect(strictLocal([], {})).toEqual({ strict: true, given: undefined });
  });
});
