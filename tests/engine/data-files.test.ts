import { describe, expect, it } from "vitest";
import { bundledFiles, parseYaml } from "../../src/build/yaml";
import { loadApp } from "../../src/catalog";
import { checkCatalog, files, http, parseJson, toolsetRegistry } from "../../src/engine";
import { parseModelsFiles } from "../../src/engine/model/providers";
import { workerFile } from "./helpers";

const kinds = toolsetRegistry(files, http);

/** YAML the way people write it: comments, anchors, block scalars, CRLF, `---` in the instructions. */
const SOURCES: Record<string, string> = {
  "workers/lead.worker": `---
# the lead
name: lead
description: >-
  Reads issues and
  delegates: labels, summaries.
model: "openai:gpt-4.1-mini"
max_turns: 7
input: &shape
  type: object
  properties: { title: { type: string }, body: { type: [string, "null"] } }
  required: [title]
toolsets:
  workers: ["help*"]
  web: { use: http, allow: [api.github.com, "*.example.com"] }
approval:
  web_fetch: ask
  remind_after: 4h
budget: { max_tokens: 20000, max_cost_usd: 0.5, on_exceed: ask }
---
Triage the issue.

---
A rule, not a frontmatter.  
`,
  "workers/helper.worker": "---\r\nname: helper\r\ninput: { type: object, properties: { title: { type: string } } }\r\n---\r\nHelp.\r\n",
  "workers/bare.worker": "---\nname: bare\n---\nNo newline at the end.",
  "workers/triggers.yaml": `# webhooks
issues:
  worker: lead
  verify: { scheme: github, secret_env: GITHUB_SECRET }
  input: { title: /issue/title, body: /issue/body }
  filter: { action: [opened, reopened], /issue/locked: false }
nightly:
  worker: helper
  schedule: "0 6 * * *"
  input: { title: "nightly {{scheduled_time}}" }
`,
  "workers/models.yaml":
    "providers:\n  local: { base_url: 'http://127.0.0.1:8000/v1', api_key: '${LOCAL_KEY}' }\nprices:\n  'openai:gpt-4.1-mini': { input: 0.4, output: 1.6 }\n",
};

describe("files are bundled as JSON data at build time", () => {
  it("the bundle reads exactly as the YAML it was made from: workers, triggers, models", () => {
    const fromYaml = loadApp(SOURCES, parseYaml);
    const fromBundle = loadApp(bundledFiles(SOURCES));
    expect([...fromBundle.catalog.workers]).toEqual([...fromYaml.catalog.workers]);
    expect([...fromBundle.triggers]).toEqual([...fromYaml.triggers]);
    expect([...fromBundle.schedules]).toEqual([...fromYaml.schedules]);
    expect(fromBundle.models).toEqual(fromYaml.models);
    expect(fromBundle.catalog.get("lead")!.instructions).toBe("Triage the issue.\n\n---\nA rule, not a frontmatter.");
  });

  it("a worker file keeps its shape: JSON frontmatter on one line, the instructions as written", () => {
    expect(bundledFiles({ "a.worker": "---\nname: a # the name\nmax_turns: 3\n---\nLine one.\n\nLine two.\n" })).toEqual({
      "a.worker": '---\n{"name":"a","max_turns":3}\n---\nLine one.\n\nLine two.\n',
    });
  });

  it("bundling a bundle changes nothing (JSON is YAML)", () => {
    const once = bundledFiles(SOURCES);
    expect(bundledFiles(once)).toEqual(once);
  });

  it("a refused catalog reports the same problems from the bundle as from the YAML", () => {
    const bad = {
      "a.worker": workerFile(
        "name: a\ncolour: blue\nmax_turns: 0\ntoolsets:\n  web: { use: http, allow: [] }\n  db: { use: postgres }\napproval:\n  fetch: maybe",
      ),
      "b.worker": workerFile("name: a"),
    };
    const messages = (check: ReturnType<typeof checkCatalog>) => check.problems.map((p) => p.message);
    const fromYaml = messages(checkCatalog(bad, kinds, parseYaml));
    expect(fromYaml.length).toBeGreaterThan(4);
    expect(messages(checkCatalog(bundledFiles(bad), kinds, parseJson))).toEqual(fromYaml);
  });

  it("data JSON cannot hold is refused at build time, naming the file", () => {
    expect(() => bundledFiles({ "workers/a.worker": workerFile("name: a\ninput: { type: object, maxProperties: .inf }") })).toThrow(
      "workers/a.worker: cannot bundle: Infinity has no JSON form; write a finite number",
    );
  });
});

describe("malformed files name the line in the file", () => {
  it("YAML: the worker file's line (counting its first ---), triggers.yaml's and models.yaml's", () => {
    const worker = checkCatalog({ "a.worker": "---\nname: a\ntoolsets: { files: [\n---\nHi.\n" }, kinds, parseYaml).problems.map((p) => p.message);
    expect(worker).toHaveLength(1);
    expect(worker[0]).toMatch(/^a\.worker: \(frontmatter\): malformed YAML at line 3: /);
    expect(() => loadApp({ "workers/triggers.yaml": "ok: 1\nt: [" }, parseYaml)).toThrow(/workers\/triggers\.yaml: \(file\): malformed YAML at line 2: /);
    expect(parseModelsFiles({ "workers/models.yaml": "prices: {}\n\nproviders: { a: [" }, parseYaml).problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^workers\/models\.yaml: \(file\): malformed YAML at line 3: /),
    ]);
  });

  it("the bundle's JSON: text that is not JSON (never bundled) is named as such", () => {
    const found = checkCatalog({ "a.worker": workerFile("name: a") }, kinds, parseJson).problems.map((p) => p.message);
    expect(found).toEqual([expect.stringMatching(/^a\.worker: \(frontmatter\): malformed JSON: /)]);
  });
});
