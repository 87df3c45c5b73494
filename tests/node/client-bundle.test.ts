import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("edgework/client bundles for browsers", () => {
  it("from src/client alone (no server code, no node: or cloudflare: import), small", async () => {
    const out = await build({
      entryPoints: [`${root}src/client/index.ts`],
      bundle: true,
      platform: "browser",
      format: "esm",
      minify: true,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.filter((f) => !f.startsWith("src/client/"))).toEqual([]);
    const bytes = out.outputFiles[0]!.contents.length;
    console.log(`edgework/client: ${inputs.length} modules, ${bytes} bytes minified`);
    expect(bytes).toBeLessThan(20_000);
  });
});
