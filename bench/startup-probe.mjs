// One fresh-process probe of the deployable bundle: its module evaluation (parse,
// compile, top-level code) and its first request (which loads the catalog).
// `cloudflare:*` imports are pointed at small stub files; Node's own start-up and
// fetch internals are warmed before anything is timed.
import { timingSafeEqual } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// Workers add timingSafeEqual to crypto.subtle; Node has it in node:crypto.
crypto.subtle.timingSafeEqual = (a, b) => timingSafeEqual(new Uint8Array(a.buffer ?? a), new Uint8Array(b.buffer ?? b));

const stubs = {
  "cloudflare:workers":
    "export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } } export class RpcTarget {} export class WorkerEntrypoint {} export const env = {};",
  "cloudflare:email": "export class EmailMessage {}",
};
const dir = mkdtempSync(join(tmpdir(), "edgework-probe-"));
let code = readFileSync(process.argv[2], "utf8");
for (const [spec, source] of Object.entries(stubs)) {
  const file = join(dir, `${spec.replace(":", "-")}.mjs`);
  writeFileSync(file, source);
  code = code.replaceAll(`"${spec}"`, JSON.stringify(pathToFileURL(file).href));
}
const bundle = join(dir, "index.mjs");
writeFileSync(bundle, code);

// Warm Node's fetch implementation (lazy in Node, built into workerd).
await new Response("warm").text();
const request = new Request("http://127.0.0.1/workers", { headers: { Authorization: "Bearer t" } });

const t0 = performance.now();
const mod = await import(pathToFileURL(bundle).href);
const t1 = performance.now();
const res = await mod.default.fetch(request, { API_TOKEN: "t" }, { waitUntil() {}, passThroughOnException() {} });
if (res.status !== 200) throw new Error(`first request answered ${res.status}: ${await res.text()}`);
await res.text();
const t2 = performance.now();
console.log(JSON.stringify({ evalMs: t1 - t0, firstRequestMs: t2 - t1 }));
