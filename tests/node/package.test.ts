import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsc = join(root, "node_modules/.bin/tsc");

// What the tarball must never hold: tests, fixtures, benchmarks, the demo, generated catalogs.
const NOT_SHIPPED = [
  /(^|\/)tests?\//,
  /\.test\.[cm]?[jt]s$/,
  /(^|\/)fixtures?\//,
  /(^|\/)bench\//,
  /\.bench\./,
  /(^|\/)demo\//,
  /(^|\/)generated\//,
  /(^|\/)\.dev\.vars/,
];

interface Packed {
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: Array<{ path: string }>;
}

describe("the edgework package (npm pack)", () => {
  // Runs prepack (scripts/build-package.mjs): dist/ is built here, and read below.
  const packed = (): Packed =>
    JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }))[0];
  let pack: Packed;
  const dir = mkdtempSync(join(tmpdir(), "edgework-consumer-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("holds the entries, their .d.ts, the bin and what it runs; no test, fixture, bench or demo file", () => {
    pack = packed();
    const paths = pack.files.map((f) => f.path);
    console.log(
      `edgework tarball: ${pack.entryCount} files, ${(pack.size / 1024).toFixed(1)} KiB packed, ${(pack.unpackedSize / 1024).toFixed(1)} KiB unpacked`,
    );
    expect(paths.filter((p) => NOT_SHIPPED.some((re) => re.test(p)))).toEqual([]);
    for (const entry of ["client/index", "testing/index", "testing/model-server"]) {
      expect(paths).toContain(`dist/${entry}.js`);
      expect(paths).toContain(`dist/${entry}.d.ts`);
    }
    expect(paths).toEqual(expect.arrayContaining(["dist/edgework.js", "dist/types/src/edgework.d.ts", "dist/types/durable-objects/create-app.d.ts"]));
    // The API's OpenAPI document, as `edgework/openapi.json` (made by scripts/build-package.mjs).
    expect(paths).toContain("dist/openapi.json");
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; exports: Record<string, unknown> };
    expect(pkg.exports["./openapi.json"]).toBe("./dist/openapi.json");
    const doc = JSON.parse(readFileSync(join(root, "dist/openapi.json"), "utf8")) as {
      openapi: string;
      info: { version: string };
      servers?: unknown;
      paths: object;
    };
    expect(doc).toMatchObject({ openapi: "3.1.0", info: { version: pkg.version } });
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/runs", "/runs/{id}", "/hooks/{name}", "/openapi.json"]));
    // No server: the app's URL is the deployment's (GET /openapi.json names it).
    expect(doc.servers).toBeUndefined();
    // This repository's own app (its entry, catalog and functions) is not the package.
    expect(paths.filter((p) => /^(dist\/types\/)?src\/(index\.|edgework\.generated|functions\/|toolsets\/index\.)/.test(p))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(["package.json", "bin/edgework.mjs", "cli/catalog.mjs", "src/catalog.ts", "CHANGELOG.md"]));
    // `edgework build` resolves a project's `import … from "edgework"` (its functions and kinds) to
    // src/edgework.ts (cli/import-ts.mjs), which re-exports the Durable Object classes' source.
    expect(paths).toEqual(expect.arrayContaining(["src/edgework.ts", "durable-objects/create-app.ts", "durable-objects/run/run.ts"]));
  }, 180_000);

  /** How a consumer's tsconfig resolves packages: a bundler's way, or Node's own (ESM, exports map, .js extensions). */
  type Resolution = "bundler" | "node16";

  /**
   * Compiles `source` with tsc --strict in an ESM project that installed edgework (a link to
   * this repository, resolved through its exports map) and `deps` of its own, the .d.ts checked too
   * (no skipLibCheck): a .d.ts import Node's resolution cannot follow is an error, not a silent `any`.
   * `extra`: more files of the project.
   */
  function typecheck(
    name: string,
    source: string,
    types: string[],
    { resolution = "bundler" as Resolution, lib = ["es2022", "dom", "dom.asynciterable"], deps = [] as string[], extra = {} as Record<string, string> } = {},
  ): void {
    const project = join(dir, `${name}-${resolution}`);
    mkdirSync(join(project, "node_modules"), { recursive: true });
    symlinkSync(root, join(project, "node_modules/edgework"), "dir");
    for (const dep of deps) symlinkSync(join(root, "node_modules", dep), join(project, "node_modules", dep), "dir");
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
    writeFileSync(join(project, "consumer.ts"), source);
    for (const [file, text] of Object.entries(extra)) writeFileSync(join(project, file), text);
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: "es2022",
      module: resolution === "node16" ? "node16" : "es2022",
      moduleResolution: resolution,
      lib,
      types,
      typeRoots: [join(root, "node_modules/@types")],
    };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts", ...Object.keys(extra)] }));
    try {
      execFileSync(tsc, ["-p", project], { cwd: project, encoding: "utf8" });
    } catch (err) {
      throw new Error(`tsc (moduleResolution ${resolution}) refused ${name}/consumer.ts:\n${(err as { stdout: string }).stdout}`);
    }
  }

  const WORKER_CONSUMER = `import { EdgeworkClient, ConflictError, NotFoundError, TERMINAL_STATUSES, type Run, type RunEvent } from "edgework/client";
import { callTool, callTree, decideApproval, modelServer, say, startRun, testClient, toolCalls, waitForStatus, type ScriptedTurn } from "edgework/testing";
const app = { fetch: async (_r: Request) => new Response("{}") };
const client: EdgeworkClient = testClient(app, { apiToken: "t" });
const turns: ScriptedTurn[] = [callTool("fx_fetch", { url: "https://x.test" }), say("done")];
export async function flow(): Promise<string> {
  await modelServer("http://127.0.0.1:1").script("m", turns);
  const { id } = await startRun(client, { worker: "w", input: "x", idempotencyKey: "job-1" });
  const run: Run = await waitForStatus(client, id, ["awaiting_approval"]);
  // Real types, not a silent any: a Run's status is no number.
  // @ts-expect-error
  const wrong: number = run.status;
  await decideApproval(client, run.id, { decision: "approve" });
  const names: string[] = toolCalls(await callTree(client, id)).map((t) => t.name);
  const event: RunEvent | undefined = undefined;
  return [names, TERMINAL_STATUSES, event, wrong, run.edgework_version, ConflictError.name, NotFoundError.name].join();
}
`;
  const NODE_CONSUMER = `import { startModelServer } from "edgework/testing/model-server";
export const port: Promise<number> = startModelServer().then((s) => s.port);
// @ts-expect-error
export const wrong: Promise<string> = startModelServer().then((s) => s.port);
`;

  for (const resolution of ["bundler", "node16"] as const) {
    it(`a consumer importing edgework/client and edgework/testing compiles with --strict against the emitted .d.ts, without Node's types (moduleResolution ${resolution})`, () => {
      typecheck("worker", WORKER_CONSUMER, [], { resolution });
    }, 60_000);

    it(`a Node consumer importing edgework/testing/model-server compiles with --strict (moduleResolution ${resolution})`, () => {
      typecheck("node", NODE_CONSUMER, ["node"], { resolution });
    }, 60_000);
  }

  it("a Worker importing edgework (createApp, the Durable Object classes, defineToolset, tool, defineFunction) compiles with --strict against the emitted .d.ts and its own wrangler types", () => {
    // What `wrangler types` writes in the user's project, naming its entry (consumer.ts) for the Durable Object classes.
    const workerTypes = readFileSync(join(root, "worker-configuration.d.ts"), "utf8").replaceAll('import("./src/index")', 'import("./consumer")');
    typecheck(
      "app",
      `import { createApp, defineFunction, defineToolset, tool, ToolError, type AppOptions, type EdgeworkApp, type StateKV, type ToolContext, type ToolsetKind } from "edgework";
import { EdgeworkClient } from "edgework/client";
import { testClient } from "edgework/testing";
import * as z from "zod";
const tally: ToolsetKind = defineToolset({
  kind: "tally",
  config: z.strictObject({ start: z.number().default(0) }),
  create: (config, init) => ({ start: config.start, state: init.state }),
  tools: {
    add: tool({
      description: "Add one",
      input: z.strictObject({ by: z.number() }),
      async run({ by }, _ctx: ToolContext, self: { start: number; state: StateKV }) {
        if (by < 0) throw new ToolError("by must be positive");
        return ((await self.state.get<number>("n")) ?? self.start) + by;
      },
    }),
  },
});
const double = defineFunction({ name: "double", description: "Twice", input: z.object({ n: z.number() }), output: z.number(), run: ({ n }) => n * 2 });
const options: AppOptions = { files: { "workers/a.worker": "---\\nname: a\\n---\\nHi." }, functions: [double], toolsets: { tally }, wranglerVars: [], basePath: "/agents" };
const app: EdgeworkApp = createApp(options);
// A test of the user's own: the app's routes, in the pool, through the typed client.
const client: EdgeworkClient = testClient(app.http, { apiToken: "t" });
export default { ...app, fetch: (request, env, ctx) => (new URL(request.url).pathname === "/health" ? new Response(String(!!client)) : app.fetch(request, env, ctx)) } satisfies ExportedHandler<Env>;
export { RunDO, GlobalToolsetsDO, DeliveryLedgerDO, RunIndexDO, EndedSessionDO, WaitIndexDO, FlowKeyDO, OperationDO, ScheduleDO, ScheduleIndexDO } from "edgework";
`,
      [],
      { lib: ["es2022"], deps: ["zod"], extra: { "worker-configuration.d.ts": workerTypes } },
    );
  }, 120_000);
});
