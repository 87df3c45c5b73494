import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";

/** What `wrangler deploy` would upload (its [build] step included). */
describe("the deployed bundle", () => {
  const out = mkdtempSync(join(tmpdir(), "edgework-bundle-test-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("carries no YAML parser (files are parsed at build time), no zod JSON Schema converter, no MCP OAuth client, and stays under Workers' 250 KiB gzip", () => {
    const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", EDGEWORK_WORKER_DIRS: "" };
    execFileSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--outdir", out, "--metafile", join(out, "meta.json")], { env, stdio: "pipe" });
    const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as {
      inputs: Record<string, unknown>;
      outputs: Record<string, { inputs?: Record<string, { bytesInOutput: number }> }>;
    };
    const inputs = Object.keys(meta.inputs);
    expect(inputs.some((f) => f.includes("src/catalog.ts"))).toBe(true);
    // The app's entry imports "edgework" as a user's does; tsconfig.json's paths send wrangler's esbuild to the package's entry.
    expect(inputs.some((f) => f.endsWith("src/edgework.ts"))).toBe(true);
    expect(inputs.some((f) => f.endsWith("durable-objects/create-app.ts"))).toBe(true);
    expect(inputs.filter((f) => /node_modules\/yaml\//.test(f))).toEqual([]);
    // Neither zod's JSON Schema converter (JSON Schemas are checked with @cfworker/json-schema) nor the MCP SDK's
    // OAuth client (wrangler.toml's [alias] "./auth.js"): 11 and 6 KiB gzip. (zod's index imports the converter: unused, it is dropped.)
    const bundled = Object.entries(meta.outputs).find(([file]) => /(^|\/)index\.js$/.test(file))![1].inputs!;
    const present = Object.entries(bundled)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([f]) => f);
    expect(present.filter((f) => /zod\/v4\/classic\/from-json-schema|@modelcontextprotocol\/sdk\/.*\/client\/auth\.js|pkce-challenge/.test(f))).toEqual([]);
    // Named after wrangler.toml's main (src/index.ts).
    expect(gzipSync(readFileSync(join(out, "index.js"))).length).toBeLessThanOrEqual(250 * 1024);
  });
});
