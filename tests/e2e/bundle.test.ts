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

  it("carries no YAML parser (files are parsed at build time) and stays under Workers' 250 KiB gzip", () => {
    const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", EDGEWORK_WORKER_DIRS: "" };
    execFileSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--outdir", out, "--metafile", join(out, "meta.json")], { env, stdio: "pipe" });
    const inputs = Object.keys((JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as { inputs: Record<string, unknown> }).inputs);
    expect(inputs.some((f) => f.includes("src/catalog.ts"))).toBe(true);
    // The app's entry imports "edgework" as a user's does; tsconfig.json's paths send wrangler's esbuild to the package's entry.
    expect(inputs.some((f) => f.endsWith("src/edgework.ts"))).toBe(true);
    expect(inputs.some((f) => f.endsWith("durable-objects/create-app.ts"))).toBe(true);
    expect(inputs.filter((f) => /node_modules\/yaml\//.test(f))).toEqual([]);
    // Named after wrangler.toml's main (src/index.ts).
    expect(gzipSync(readFileSync(join(out, "index.js"))).length).toBeLessThanOrEqual(250 * 1024);
  });
});
