import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
    expect(paths).toEqual(expect.arrayContaining(["package.json", "bin/edgework.mjs", "cli/catalog.mjs", "src/catalog.ts", "CHANGELOG.md"]));
  }, 180_000);

  /** How a consumer's tsconfig resolves packages: a bundler's way, or Node's own (ESM, exports map, .js extensions). */
  type Resolution = "bundler" | "node16";

  /**
   * Compiles `source` with tsc --strict in an ESM project that installed edgework (a link to
   * this repository, resolved through its exports map), the .d.ts checked too (no skipLibCheck):
   * a .d.ts import Node's resolution cannot follow is an error, not a silent `any`.
   */
  function typecheck(name: string, source: string, types: string[], resolution: Resolution = "bundler"): void {
    const project = join(dir, `${name}-${resolution}`);
    mkdirSync(join(project, "node_modules"), { recursive: true });
    symlinkSync(root, join(project, "node_modules/edgework"), "dir");
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
    writeFileSync(join(project, "consumer.ts"), source);
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: "es2022",
      module: resolution === "node16" ? "node16" : "es2022",
      moduleResolution: resolution,
      lib: ["es2022", "dom", "dom.asynciterable"],
      types,
      typeRoots: [join(root, "node_modules/@types")],
    };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
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
      typecheck("worker", WORKER_CONSUMER, [], resolution);
    }, 60_000);

    it(`a Node consumer importing edgework/testing/model-server compiles with --strict (moduleResolution ${resolution})`, () => {
      typecheck("node", NODE_CONSUMER, ["node"], resolution);
    }, 60_000);
  }
});
