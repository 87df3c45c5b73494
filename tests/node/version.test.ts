import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const read = (dir: string, path: string) => readFileSync(join(dir, path), "utf8");
const compiledIn = (dir: string) => /export const EDGEWORK_VERSION = "(.*)";/.exec(read(dir, "src/version.ts"))?.[1];

describe("the package version a run records", () => {
  it("src/version.ts (compiled into the app) says package.json's version, and CHANGELOG.md has a section for it", () => {
    const { version, scripts } = JSON.parse(read(root, "package.json")) as { version: string; scripts: Record<string, string> };
    expect(compiledIn(root)).toBe(version);
    // `npm version <bump>` runs the "version" script before it commits: the constant follows.
    expect(scripts.version).toContain("scripts/sync-version.mjs");
    expect(read(root, "CHANGELOG.md")).toMatch(new RegExp(`^## ${version.replaceAll(".", "\\.")}( |$)`, "m"));
  });

  const dir = mkdtempSync(join(tmpdir(), "edgework-version-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("scripts/sync-version.mjs (npm version's hook) rewrites the constant from package.json", () => {
    for (const path of ["scripts/sync-version.mjs", "src/version.ts"]) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      cpSync(join(root, path), join(dir, path));
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "edgework", version: "0.2.0-rc.1" }));
    execFileSync("node", [join(dir, "scripts/sync-version.mjs")]);
    expect(compiledIn(dir)).toBe("0.2.0-rc.1");
  });
});
