import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const scaffolder = join(root, "create-edgework");
const bin = join(scaffolder, "bin/create-edgework.mjs");
const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("create-edgework (npm create edgework)", () => {
  const dir = mkdtempSync(join(tmpdir(), "create-edgework-"));
  const create = (...args: string[]) => spawnSync("node", [bin, ...args], { cwd: dir, encoding: "utf8" });
  // What npm pack's prepack does: the repository's triage example and demo into the template.
  beforeAll(() => execFileSync("node", [join(scaffolder, "scripts/sync-template.mjs")]));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes a project named after its folder, pinned to exactly this edgework version, and prints the next steps", () => {
    const run = create("my-app");
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const project = join(dir, "my-app");
    const manifest = json(join(project, "package.json"));
    expect(manifest.name).toBe("my-app");
    expect(manifest.dependencies).toEqual({ edgework: json(join(root, "package.json")).version });
    expect(manifest.scripts).toMatchObject({ start: expect.any(String), test: expect.any(String) });
    expect(existsSync(join(project, ".gitignore"))).toBe(true);
    expect(existsSync(join(project, "gitignore"))).toBe(false);
    for (const file of ["workers/triage.worker", "workers/triggers.yaml", "scripts/demo/demo.mjs", ".dev.vars.example"])
      expect(readFileSync(join(project, file), "utf8"), file).toBe(readFileSync(join(root, file), "utf8"));
    const toml = readFileSync(join(project, "wrangler.toml"), "utf8");
    expect(toml).toMatch(/^name = "my-app"$/m);
    expect(toml).toContain('queue = "my-app-model-requests"');
    expect(readFileSync(join(project, "README.md"), "utf8")).toMatch(/^# my-app\n/);
    expect(run.stdout).toContain("Created my-app (edgework ");
    expect(run.stdout).toMatch(/cd my-app\n\s+npm install\n\s+npm start .*\n\s+npm test /);
  });

  it("gives the Worker and its queue a name Workers accept when the package name has dots or underscores", () => {
    expect(create("acme.triage_bot").status).toBe(0);
    const toml = readFileSync(join(dir, "acme.triage_bot/wrangler.toml"), "utf8");
    expect(toml).toMatch(/^name = "acme-triage-bot"$/m);
    expect(toml).not.toContain("my-edgework-app");
    expect(json(join(dir, "acme.triage_bot/package.json")).name).toBe("acme.triage_bot");
  });

  it("refuses a folder that is not empty, and writes nothing into it", () => {
    const taken = join(dir, "taken");
    mkdirSync(taken);
    writeFileSync(join(taken, "notes.txt"), "mine");
    const run = create("taken");
    expect(run.status).toBe(1);
    expect(run.stderr).toBe("create-edgework: taken exists and is not empty: choose a new or empty folder. Nothing was written.\n");
    expect(readdirSync(taken)).toEqual(["notes.txt"]);
  });

  it("refuses a path that is a file", () => {
    writeFileSync(join(dir, "a-file"), "");
    expect(create("a-file")).toMatchObject({ status: 1, stderr: "create-edgework: a-file exists and is not a folder. Nothing was written.\n" });
  });

  it.each([
    ["My-App", "it has capital letters"],
    ["_app", 'it starts with "." or "_"'],
    [".app", 'it starts with "." or "_"'],
    ["node_modules", "it is reserved by npm"],
    ["http", "it is the name of a Node.js core module"],
    ["café", "it has characters a URL would escape"],
    ["a b", "it has characters a URL would escape"],
    ["it's", "it has characters a URL would escape"],
    [`${"x".repeat(215)}`, "it is longer than 214 characters"],
  ])("refuses the folder name %j (not a package name: %s) and creates no folder", (name, reason) => {
    const run = create(name);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`create-edgework: "${name}" cannot be the project's package name (it is the folder's): ${reason}`);
    expect(existsSync(join(dir, name))).toBe(false);
  });

  it("prints its usage, exit code 2, without exactly one folder", () => {
    for (const args of [[], ["a", "b"], ["--force"]]) {
      const run = create(...args);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr).toContain("usage: npm create edgework@latest <folder>");
    }
    expect(create("--help")).toMatchObject({ status: 0, stdout: expect.stringContaining("usage:") });
  });

  it("is released with edgework, and its template pins the toolchain this repository tests with", () => {
    const repository = json(join(root, "package.json"));
    expect(json(join(scaffolder, "package.json")).version).toBe(repository.version);
    const template = json(join(scaffolder, "template/package.json"));
    for (const [name, version] of Object.entries(template.devDependencies))
      expect(version, name).toBe(repository.devDependencies[name] ?? repository.dependencies[name]);
  });
});
