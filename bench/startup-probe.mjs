// One fresh-process probe of the deployable bundle: module evaluation time and the
// first request (which loads the catalog). `cloudflare:*` modules are stubbed.
import { timingSafeEqual } from "node:crypto";
import { register } from "node:module";

// Workers add timingSafeEqual to crypto.subtle; Node has it in node:crypto.
crypto.subtle.timingSafeEqual = (a, b) => timingSafeEqual(new Uint8Array(a.buffer ?? a), new Uint8Array(b.buffer ?? b));

const stubs = {
  "cloudflare:workers": "export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } } export class RpcTarget {} export class WorkerEntrypoint {} export const env = {};",
  "cloudflare:email": "export class EmailMessage {}",
};
const loader = `const stubs = ${JSON.stringify(stubs)};
export async function resolve(spec, ctx, next) {
  if (spec in stubs) return { url: "data:text/javascript," + encodeURIComponent(stubs[spec]), shortCircuit: true };
  return next(spec, ctx);
}`;
register(`data:text/javascript,${encodeURIComponent(loader)}`);

const bundle = process.argv[2];
const t0 = performance.now();
const mod = await import(bundle);
const t1 = performance.now();
const res = await mod.default.fetch(new Request("http://127.0.0.1/workers", { headers: { Authorization: "Bearer t" } }), { API_TOKEN: "t" }, { waitUntil() {}, passThroughOnException() {} });
if (res.status !== 200) throw new Error(`first request answered ${res.status}: ${await res.text()}`);
const t2 = performance.now();
console.log(JSON.stringify({ evalMs: t1 - t0, firstRequestMs: t2 - t1 }));
