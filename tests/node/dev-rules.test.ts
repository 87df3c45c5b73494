import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { devBanner, EMULATED, NOT_EMULATED } from "../../cli/dev-rules.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("npm run dev says at start which production rules it does not enforce", () => {
  it("the repository's and the template's dev scripts print the banner before wrangler dev", () => {
    for (const file of ["package.json", "create-edgework/template/package.json"]) {
      const dev = (JSON.parse(readFileSync(`${root}${file}`, "utf8")) as { scripts: { dev: string } }).scripts.dev;
      expect(dev, file).toMatch(/edgework(\.mjs)? dev-rules && wrangler dev$/);
    }
  });

  it("names every rule from the one list, plainly saying dev is not as strict while any is not emulated", () => {
    const out = execFileSync("node", ["bin/edgework.mjs", "dev-rules"], { cwd: root, encoding: "utf8" });
    expect(out).toBe(`${devBanner()}\n`);
    if (NOT_EMULATED.length) expect(out).toMatch(/^edgework dev: local workerd is NOT as strict as Cloudflare\./);
    for (const rule of NOT_EMULATED as string[]) expect(out).toContain(`✗ ${rule}`);
    for (const { rule } of EMULATED as { rule: string }[]) expect(out).toContain(`✓ ${rule}`);
  });
});
