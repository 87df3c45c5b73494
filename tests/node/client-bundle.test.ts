import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
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

  it("its types reach no server module: beyond src/client only the API's schemas (src/api/), which import only zod and each other", () => {
    const listed = execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", "tsconfig.client.json", "--listFilesOnly"], { cwd: root, encoding: "utf8" });
    const files = listed
      .split("\n")
      .filter((f) => f && !f.includes("/node_modules/"))
      .map((f) => relative(root, f));
    expect(files.filter((f) => !f.startsWith("src/client/") && !f.startsWith("src/api/"))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(["src/api/run-view.ts", "src/api/runs.ts"]));
    const api = join(root, "src/api");
    const imports = readdirSync(api).flatMap((f) => [...readFileSync(join(api, f), "utf8").matchAll(/\bfrom\s+"([^"]+)"/g)].map((m) => `${f} → ${m[1]}`));
    expect(imports.filter((i) => !/ → (zod|\.\/[a-z-]+)$/.test(i))).toEqual([]);
  }, 60_000);
});
