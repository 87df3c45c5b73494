import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUNDLE_BUDGET_KIB } from "../../scripts/bundle-budget.mjs";
import { totalUpload } from "../../scripts/wrangler-upload.mjs";

/** What `wrangler deploy` would upload (its [build] step included). */
describe("the deployed bundle", () => {
  const out = mkdtempSync(join(tmpdir(), "edgework-bundle-test-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("carries no YAML parser (files are parsed at build time), no zod JSON Schema converter, no ajv, core-js or MCP OAuth client, one Hono router and no hono/jsx runtime, with no [alias]; the whole upload stays within the budget (scripts/bundle-budget.mjs)", () => {
    const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", EDGEWORK_WORKER_DIRS: "" };
    const output = execFileSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--outdir", out, "--metafile", join(out, "meta.json")], {
      env,
      encoding: "utf8",
    });
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
    // Kept out by the choice of code, not by aliases: zod's JSON Schema converter (JSON Schemas are checked with
    // @cfworker/json-schema; zod's index imports it, unused, dropped), ajv (the MCP SDK's Client and Server import it:
    // src/engine/mcp/client.ts and src/mcp/server.ts stand on its Protocol instead), core-js (mimetext's Babel runtime:
    // src/email/mime.ts writes MIME itself), the SDK's OAuth client (its Streamable HTTP transport imports it:
    // src/engine/mcp/transport.ts is ours), the SDK's server transport (sessions and resumability, which /mcp does not use:
    // src/mcp/stateless-transport.ts), Hono's default routers (the app's Hono is hono/tiny's: one PatternRouter), hono/jsx's
    // runtime (the views render through src/views/jsx-runtime.ts).
    const bundled = Object.entries(meta.outputs).find(([file]) => /(^|\/)index\.js$/.test(file))![1].inputs!;
    const present = Object.entries(bundled)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([f]) => f);
    expect(
      present.filter((f) =>
        /zod\/v4\/classic\/from-json-schema|node_modules\/(ajv|ajv-formats|fast-uri|core-js-pure|@babel\/runtime-corejs3|mimetext|pkce-challenge)\/|@modelcontextprotocol\/sdk\/.*\/(auth|webStandardStreamableHttp)\.js|hono\/dist\/router\/(reg-exp|trie|smart)-router\/|hono\/dist\/jsx\//.test(
          f,
        ),
      ),
    ).toEqual([]);
    expect(readFileSync("wrangler.toml", "utf8")).not.toMatch(/^\s*\[alias\]/m);
    // The platform's measure: the whole upload, compressed, as wrangler reports it.
    expect(totalUpload(output).gzipKiB).toBeLessThanOrEqual(BUNDLE_BUDGET_KIB);
  });
});
