// What parsing the catalog's YAML at runtime would cost, measured now (issue 14, item 4:
// the catalog is bundled as JSON since, so this is the "before" against today's "after"):
// `yaml` bundled alone (minified, as wrangler would), its module evaluation in a fresh
// process, and parsing this deploy's worker frontmatter and .yaml files with it
// against JSON.parse of the bundled JSON the app reads instead.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Run in a fresh process: times importing the bundled `yaml`, then both parses of the catalog. */
async function probe(bundle, yamlTexts, jsonTexts) {
  const t0 = performance.now();
  const { parse } = await import(pathToFileURL(bundle).href);
  const t1 = performance.now();
  for (const t of yamlTexts) parse(t);
  const t2 = performance.now();
  for (const t of jsonTexts) JSON.parse(t);
  const t3 = performance.now();
  return { evalMs: t1 - t0, yamlParseMs: t2 - t1, jsonParseMs: t3 - t2 };
}

/** The catalog as YAML (frontmatter of each .worker file, each .yaml file) and as the JSON the app bundles. */
function catalogTexts(root) {
  const dir = join(root, "workers");
  const yamlTexts = [];
  for (const name of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, name), "utf8");
    if (name.endsWith(".yaml")) yamlTexts.push(text);
    else if (name.endsWith(".worker")) yamlTexts.push(text.split(/^---\s*$/m)[1] ?? "");
  }
  const generated = readFileSync(join(root, "src/edgework.generated.ts"), "utf8");
  // `files`' object literal: from its first brace to the line that closes it (the module exports more after it).
  const start = generated.indexOf("{");
  const files = JSON.parse(generated.slice(start, generated.indexOf("\n};\n", start) + 2));
  const jsonTexts = Object.entries(files).map(([file, text]) => (file.endsWith(".worker") ? text.split("\n")[1] : text));
  return { yamlTexts, jsonTexts };
}

export async function yamlCost(root, samples = 7) {
  const dir = mkdtempSync(join(tmpdir(), "edgework-yaml-"));
  const bundle = join(dir, "yaml.mjs");
  await build({
    stdin: { contents: `export { parse } from "yaml";`, resolveDir: root },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    outfile: bundle,
    logLevel: "silent",
  });
  const code = readFileSync(bundle);
  const texts = catalogTexts(root);
  const input = join(dir, "texts.json");
  writeFileSync(input, JSON.stringify(texts));
  const runs = Array.from({ length: samples }, () =>
    JSON.parse(execFileSync("node", [new URL(import.meta.url).pathname, bundle, input], { encoding: "utf8" })),
  );
  return {
    rawKiB: code.length / 1024,
    gzipKiB: gzipSync(code).length / 1024,
    files: texts.yamlTexts.length,
    evalMs: median(runs.map((r) => r.evalMs)),
    yamlParseMs: median(runs.map((r) => r.yamlParseMs)),
    jsonParseMs: median(runs.map((r) => r.jsonParseMs)),
  };
}

// As a child process: `node bench/yaml-cost.mjs <bundle> <texts.json>` prints one probe.
if (process.argv[1] === new URL(import.meta.url).pathname && process.argv.length === 4) {
  const { yamlTexts, jsonTexts } = JSON.parse(readFileSync(process.argv[3], "utf8"));
  console.log(JSON.stringify(await probe(process.argv[2], yamlTexts, jsonTexts)));
}
