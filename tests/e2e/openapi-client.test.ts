import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startLocalApp } from "../../scripts/demo/local-app.mjs";

/**
 * Issue 30's acceptance for the API document: a client generated from the served
 * GET /openapi.json by a common generator (openapi-typescript) type-checks against the app's
 * real answers, under wrangler dev: a run started, then read once it ended.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => join(root, "node_modules/.bin", name);
const TOKEN = "openapi-client-token";

let app: Awaited<ReturnType<typeof startLocalApp>>;
const dir = mkdtempSync(join(tmpdir(), "edgework-openapi-"));
beforeAll(async () => {
  app = await startLocalApp({ vars: { API_TOKEN: TOKEN } });
}, 90_000);
afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const api = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${app.url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" } });
  expect(res.ok, `${path}: ${res.status}`).toBe(true);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

it("a client generated from GET /openapi.json by openapi-typescript type-checks against a real run started and read", async () => {
  writeFileSync(join(dir, "openapi.json"), await (await fetch(`${app.url}/openapi.json`)).text());
  execFileSync(bin("openapi-typescript"), [join(dir, "openapi.json"), "-o", join(dir, "api.d.ts")], { stdio: "pipe" });

  const started = await api("/runs", {
    method: "POST",
    body: JSON.stringify({ worker: "notes", input: "Note: buy milk.", approval_mode: "approve_all", attributes: { list: "shopping" } }),
  });
  expect(started.status).toBe(202);
  let run = (await api(`/runs/${started.body.id}`)).body;
  for (const until = Date.now() + 60_000; ["queued", "running"].includes(run.status as string) && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 250));
    run = (await api(`/runs/${started.body.id}`)).body;
  }
  expect(run).toMatchObject({ status: "succeeded", attributes: { list: "shopping" }, call_tree: { worker: "notes" } });

  // Object literals: a field the schema does not have is an error, as is a wrong type.
  writeFileSync(
    join(dir, "consumer.ts"),
    `import type { paths } from "./api";
type Started = paths["/runs"]["post"]["responses"][202]["content"]["application/json"];
type Run = paths["/runs/{id}"]["get"]["responses"][200]["content"]["application/json"];
export const started: Started = ${JSON.stringify(started.body)};
export const run: Run = ${JSON.stringify(run)};
// Real types, not any: a run's status is no number, and a run has no field it does not send.
// @ts-expect-error
export const status: Run["status"] = 1;
// @ts-expect-error
export const extra: Started = { id: "r", status_url: "https://x.test/runs/r", surprise: true };
`,
  );
  const compilerOptions = { strict: true, noEmit: true, target: "es2022", module: "es2022", moduleResolution: "bundler", lib: ["es2022"], types: [] };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
  try {
    execFileSync(bin("tsc"), ["-p", dir], { cwd: dir, encoding: "utf8" });
  } catch (err) {
    throw new Error(`tsc refused the generated client against the real answers:\n${(err as { stdout: string }).stdout}`);
  }
}, 120_000);
