import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../../bin/edgework.mjs", import.meta.url));

const GOOD = `---
name: greeter
description: Greets.
---
Say hello.
`;
// Two problems in one file, and a second bad file: `check` must list them all.
const BAD = `---
name: "bad name!"
description: 7
---
x
`;
const WORSE = `---
name: worse
description: Uses a model nobody declared.
model: nowhere:thing
---
x
`;

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A user's project: workers/ with the given files, and a wrangler.toml. */
function project(files: Record<string, string>, toml = `name = "app"\n`): string {
  const dir = mkdtempSync(join(tmpdir(), "edgework-cli-"));
  dirs.push(dir);
  mkdirSync(join(dir, "workers"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "workers", name), text);
  writeFileSync(join(dir, "wrangler.toml"), toml);
  return dir;
}

function edgework(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return edgeworkWith({}, cwd, ...args);
}

function edgeworkWith(env: Record<string, string>, cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("node", [bin, ...args], { cwd, env: { ...process.env, EDGEWORK_WORKER_DIRS: "", ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr }),
    );
  });
}

describe("the edgework CLI, in a user's project (paths from the working directory)", { timeout: 60_000 }, () => {
  it("--help and no command print the commands; an unknown command exits 2 with the help", async () => {
    const dir = project({});
    for (const args of [["--help"], []]) {
      const { code, stdout } = await edgework(dir, ...args);
      expect(code).toBe(0);
      for (const command of ["build", "check", "new worker <name>", "schema"]) expect(stdout).toContain(command);
    }
    const unknown = await edgework(dir, "deploy");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command "deploy"[\s\S]*new worker <name>/);
  });

  it("build bundles a good catalog and wrangler.toml's var names into the project's src/edgework.generated.ts and says what it holds", async () => {
    const dir = project({ "greeter.worker": GOOD });
    const { code, stdout } = await edgework(dir, "build");
    expect(code).toBe(0);
    expect(stdout).toContain("catalog ok: 1 workers, 0 webhook, 0 scheduled, 0 email and 0 slack triggers");
    const bundled = readFileSync(join(dir, "src/edgework.generated.ts"), "utf8");
    expect(bundled).toMatch(/^export const files: Record<string, string> = \{\n {2}"workers\/greeter\.worker"/m);
    expect(bundled).toContain("export const wranglerVars: readonly string[] = [");
    // No functions or kinds of its own yet: empty ones, so src/index.ts passes them all the same.
    expect(bundled).toContain("export const functions = [] as const;\nexport const toolsets = {};\n");
  });

  it("build takes its folders as arguments or from EDGEWORK_WORKER_DIRS (wrangler dev's [build] in the demo and e2e tests), and --out", async () => {
    const dir = project({ "greeter.worker": GOOD });
    mkdirSync(join(dir, "more"));
    writeFileSync(join(dir, "more/other.worker"), GOOD.replace("greeter", "other"));
    expect(await edgeworkWith({ EDGEWORK_WORKER_DIRS: "workers,more" }, dir, "build")).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("catalog ok: 2 workers"),
    });
    expect(readFileSync(join(dir, "src/edgework.generated.ts"), "utf8")).toContain(`"more/other.worker"`);
    expect(await edgework(dir, "build", "--out", "gen/files.ts", "more")).toMatchObject({ code: 0, stdout: expect.stringContaining("catalog ok: 1 workers") });
    expect(readFileSync(join(dir, "gen/files.ts"), "utf8")).not.toContain("greeter");
    expect(await edgework(dir, "build", "--out", "gen/both.ts", "--workers", "workers,more")).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("catalog ok: 2 workers"),
    });
    expect(await edgework(dir, "build", "--outt", "x")).toMatchObject({ code: 1, stderr: "unknown option --outt\n" });
  });

  it("build refuses a bad catalog, writing nothing; check lists every problem of every file and exits 1", async () => {
    const dir = project({ "greeter.worker": GOOD, "bad.worker": BAD, "worse.worker": WORSE });
    const build = await edgework(dir, "build");
    expect(build.code).toBe(1);
    expect(existsSync(join(dir, "src/edgework.generated.ts"))).toBe(false);
    const check = await edgework(dir, "check");
    expect(check.code).toBe(1);
    expect(check.stderr).toContain("worker catalog refused (3 problems)");
    expect(check.stderr).toContain("workers/bad.worker: name: must be 1-64 characters");
    expect(check.stderr).toContain("workers/bad.worker: description:");
    expect(check.stderr).toContain(`workers/worse.worker: model: unknown provider "nowhere"`);
  });

  it("build refuses an approval rule it cannot check, naming the file, the field and why", async () => {
    const rules = (when: string) => `---
name: payer
description: Pays.
toolsets:
  web: { use: http, allow: [api.example.com] }
approval:
  web_fetch: { ask_when: ${when}, otherwise: allow }
---
Pay.
`;
    const dir = project({ "payer.worker": rules("{ methd: [POST] }"), "deep.worker": rules("{ a.b.c.d.e.f.g.h.i: 1 }").replace("payer", "deep") });
    const build = await edgework(dir, "build");
    expect(build.code).toBe(1);
    expect(existsSync(join(dir, "src/edgework.generated.ts"))).toBe(false);
    expect(build.stderr).toContain(
      `workers/payer.worker: approval.web_fetch.ask_when.methd: no field "methd" in the tool's input; its fields: url, method, headers, body, save_to`,
    );
    expect(build.stderr).toContain("workers/deep.worker: approval.web_fetch.ask_when.a.b.c.d.e.f.g.h.i: too deep: 9 levels, at most 8");
    writeFileSync(join(dir, "workers/payer.worker"), rules("{ method: [POST, PUT] }"));
    writeFileSync(join(dir, "workers/deep.worker"), rules("{ method: DELETE }").replace("payer", "deep"));
    expect((await edgework(dir, "build")).code).toBe(0);
  });

  it("check: a good catalog exits 0; a cron wrangler.toml lists but no trigger uses is a problem; no workers/ is one too", async () => {
    expect(await edgework(project({ "greeter.worker": GOOD }), "check")).toMatchObject({ code: 0, stdout: expect.stringContaining("catalog ok: 1 workers") });
    const crons = await edgework(project({ "greeter.worker": GOOD }, `name = "app"\n[triggers]\ncrons = ["0 6 * * *"]\n`), "check");
    expect(crons.code).toBe(1);
    expect(crons.stderr).toContain(`"0 6 * * *" is in wrangler.toml's [triggers] crons but no trigger in triggers.yaml uses it`);
    const empty = mkdtempSync(join(tmpdir(), "edgework-cli-"));
    dirs.push(empty);
    expect(await edgework(empty, "check")).toMatchObject({ code: 1, stderr: expect.stringContaining("workers/: no such folder") });
  });

  it("new worker writes a file the check accepts, refuses to overwrite it, and refuses a bad name", async () => {
    const dir = project({});
    expect(await edgework(dir, "new", "worker", "summarize-notes")).toMatchObject({ code: 0, stdout: "wrote workers/summarize-notes.worker\n" });
    expect(readFileSync(join(dir, "workers/summarize-notes.worker"), "utf8")).toMatch(/^---\nname: summarize-notes\n/);
    expect(await edgework(dir, "check")).toMatchObject({ code: 0, stdout: expect.stringContaining("catalog ok: 1 workers") });

    writeFileSync(join(dir, "workers/summarize-notes.worker"), GOOD);
    const again = await edgework(dir, "new", "worker", "summarize-notes");
    expect(again).toMatchObject({ code: 1, stderr: "workers/summarize-notes.worker already exists: edit it, or choose another name\n" });
    expect(readFileSync(join(dir, "workers/summarize-notes.worker"), "utf8")).toBe(GOOD);

    for (const name of ["../escape", "has space", "x".repeat(65), ""]) {
      const bad = await edgework(dir, "new", "worker", name);
      expect(bad.code, name).toBe(1);
      expect(bad.stderr, name).toMatch(/^worker name .*: must be 1-64 characters/);
    }
    expect(existsSync(join(dir, "escape.worker"))).toBe(false);
    expect((await edgework(dir, "new", "worker")).code).toBe(2);
  });

  it("schema writes the editor JSON Schema into the project, or prints it with --stdout", async () => {
    const dir = project({});
    expect(await edgework(dir, "schema")).toMatchObject({ code: 0, stdout: "wrote schemas/worker.schema.json\n" });
    const written = readFileSync(join(dir, "schemas/worker.schema.json"), "utf8");
    expect(JSON.parse(written)).toMatchObject({ properties: { name: { type: "string" } } });
    const printed = await edgework(dir, "schema", "--stdout");
    expect(printed).toMatchObject({ code: 0, stdout: written });
  });

  it("build and check know the project's own kinds (src/toolsets/index.ts) and functions, written against `edgework` as createApp takes them", async () => {
    const TALLY = `---\nname: tally-user\ndescription: Counts.\ntoolsets:\n  t: { use: tally, start: 2 }\n  workers: [double]\n---\nCount.\n`;
    const dir = project({ "tally-user.worker": TALLY });
    mkdirSync(join(dir, "src/functions"), { recursive: true });
    mkdirSync(join(dir, "src/toolsets"), { recursive: true });
    writeFileSync(
      join(dir, "src/toolsets/index.ts"),
      `import { defineToolset, tool, type ToolsetKind } from "edgework";
import * as z from "zod";
const tally = defineToolset({
  kind: "tally",
  config: z.strictObject({ start: z.number() }),
  create: (config) => config,
  tools: { add: tool({ description: "Add one", input: z.strictObject({}), run: (_args, _ctx, self: { start: number }) => self.start + 1 }) },
});
export const toolsets: Record<string, ToolsetKind> = { tally };
`,
    );
    writeFileSync(
      join(dir, "src/functions/index.ts"),
      `import { defineFunction } from "edgework";
import * as z from "zod";
export const functions = [defineFunction({ name: "double", description: "Twice", input: z.object({ n: z.number() }), run: ({ n }) => n * 2 })];
`,
    );
    const built = await edgework(dir, "build");
    // The function counts with the workers.
    expect(built).toMatchObject({ code: 0, stdout: expect.stringContaining("catalog ok: 2 workers") });
    const generated = readFileSync(join(dir, "src/edgework.generated.ts"), "utf8");
    expect(generated).toContain('"workers/tally-user.worker"');
    // Handed on to createApp by the generated module: adding a function needs no edit of src/index.ts.
    expect(generated).toContain('export { functions } from "./functions/index";\nexport { toolsets } from "./toolsets/index";\n');
    expect(await edgework(dir, "build", "--out", "gen/deep/files.ts")).toMatchObject({ code: 0 });
    expect(readFileSync(join(dir, "gen/deep/files.ts"), "utf8")).toContain('export { functions } from "../../src/functions/index";');
    // A config the kind refuses, and a project without the kind: each named.
    writeFileSync(join(dir, "workers/tally-user.worker"), TALLY.replace("start: 2", "start: two"));
    const refused = await edgework(dir, "check");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("workers/tally-user.worker: toolsets.t.start");
    writeFileSync(join(dir, "workers/tally-user.worker"), TALLY);
    const elsewhere = await edgework(dir, "check", "--toolsets", "src/none.ts");
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('unknown toolset kind "tally"');
  });
});
