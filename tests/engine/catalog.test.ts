import { describe, expect, it } from "vitest";
import { CatalogError, files, http, loadCatalog, toolsetRegistry } from "../../src/engine";
import { parseYaml } from "../../src/build/yaml";
import { workerFile } from "./helpers";

const kinds = toolsetRegistry(files, http);
const ok = (name: string) => workerFile(`name: ${name}\ndescription: fine`);

/** Loads a catalog expected to be refused; returns its problems as text. */
function problems(filesByName: Record<string, string>): string[] {
  try {
    loadCatalog(filesByName, kinds, parseYaml);
  } catch (e) {
    expect(e).toBeInstanceOf(CatalogError);
    return (e as CatalogError).problems.map((p) => p.message);
  }
  throw new Error("catalog was accepted");
}

describe("catalog refuses bad worker files with file: field: reason", () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ["unknown key", { "a.worker": workerFile("name: a\ncolour: blue") }, /^a\.worker: colour: unknown key$/],
    [
      "unknown toolset kind",
      { "a.worker": workerFile("name: a\ntoolsets:\n  db: { use: postgres }") },
      /^a\.worker: toolsets\.db\.use: unknown toolset kind "postgres"; known: files, http$/,
    ],
    ["bad kind config", { "a.worker": workerFile("name: a\ntoolsets:\n  web: { use: http, allow: [] }") }, /^a\.worker: toolsets\.web\.allow: Too small/],
    [
      "an input schema the validator cannot read",
      { "a.worker": workerFile("name: a\ninput: { type: object, properties: { n: { type: count } } }") },
      /^a\.worker: input: not a usable JSON Schema: properties\.n\.type: /,
    ],
    [
      "an output schema whose $ref points at nothing",
      { "a.worker": workerFile("name: a\noutput: { type: object, properties: { n: { $ref: '#/$defs/n' } } }") },
      /^a\.worker: output: not a usable JSON Schema: \$ref "#\/\$defs\/n" points at nothing$/,
    ],
    [
      "unknown kind config key",
      { "a.worker": workerFile("name: a\ntoolsets:\n  files: { use: files, rot: /x }") },
      /^a\.worker: toolsets\.files\.rot: unknown key$/,
    ],
    [
      "unknown worker in workers:",
      { "a.worker": workerFile("name: a\ntoolsets:\n  workers: [ghost]") },
      /^a\.worker: toolsets\.workers: unknown worker "ghost"; known: a$/,
    ],
    [
      "glob matching nothing",
      { "a.worker": workerFile('name: a\ntoolsets:\n  workers: ["label-*"]'), "b.worker": ok("b") },
      /^a\.worker: toolsets\.workers: glob "label-\*" matches no worker; known: a, b$/,
    ],
    [
      "duplicate worker names",
      { "a.worker": ok("same"), "b.worker": ok("same") },
      /^b\.worker: name: "same" is also the name of a\.worker; worker names are unique$/,
    ],
    ["name breaking the tool-name rule", { "a.worker": workerFile("name: has space") }, /^a\.worker: name: must be 1-64 characters/],
    ["name too long", { "a.worker": workerFile(`name: ${"x".repeat(65)}`) }, /^a\.worker: name: must be 1-64/],
    ["malformed YAML", { "a.worker": workerFile("name: a\ntoolsets: { files: [") }, /^a\.worker: \(frontmatter\): malformed YAML at line/],
    ["empty instructions", { "a.worker": "---\nname: a\n---\n   \n" }, /^a\.worker: instructions: empty/],
    ["no frontmatter", { "a.worker": "just text" }, /^a\.worker: \(frontmatter\): a worker file starts with YAML frontmatter/],
    [
      "model with compatible_models",
      { "a.worker": workerFile("name: a\nmodel: openai:gpt-4.1\ncompatible_models: ['openai:*']") },
      /^a\.worker: compatible_models: cannot be used together with model/,
    ],
    ["bad model string", { "a.worker": workerFile("name: a\nmodel: gpt-4") }, /^a\.worker: model: must be "provider:model"/],
    [
      "unknown model provider",
      { "a.worker": workerFile("name: a\nmodel: anthropic:claude") },
      /^a\.worker: model: unknown provider "anthropic"; known: openai, test$/,
    ],
    [
      "bad approval policy",
      { "a.worker": workerFile("name: a\ntoolsets:\n  files: { use: files }\napproval:\n  write_file: maybe") },
      /^a\.worker: approval\.write_file: must be allow, ask or deny/,
    ],
    [
      "approval for a tool the worker lacks",
      { "a.worker": workerFile("name: a\ntoolsets:\n  files: { use: files }\napproval:\n  wirte_file: allow") },
      /^a\.worker: approval\.wirte_file: no tool "wirte_file" in this worker; its tools: read_file, list_files, write_file, delete_file$/,
    ],
    ["bad notify address", { "a.worker": workerFile("name: a\napproval:\n  notify: not-an-email") }, /^a\.worker: approval\.notify: Invalid email/],
    [
      "input schema not an object",
      { "a.worker": workerFile("name: a\ninput: { type: string }") },
      /^a\.worker: input: must be a JSON Schema with type: object/,
    ],
    ["max_turns not a positive integer", { "a.worker": workerFile("name: a\nmax_turns: 0") }, /^a\.worker: max_turns: Too small/],
    [
      "toolsets.workers not a list",
      { "a.worker": workerFile("name: a\ntoolsets:\n  workers: { use: files }") },
      /^a\.worker: toolsets\.workers: must be a list/,
    ],
    [
      "files root escaping",
      { "a.worker": workerFile("name: a\ntoolsets:\n  files: { use: files, root: ../etc }") },
      /^a\.worker: toolsets\.files\.root: must be an absolute path/,
    ],
    [
      "bad scope",
      { "a.worker": workerFile("name: a\ntoolsets:\n  files: { use: files, scope: forever }") },
      /^a\.worker: toolsets\.files\.scope: Invalid option/,
    ],
    [
      "over-long glob in workers:",
      { "a.worker": workerFile(`name: a\ntoolsets:\n  workers: ["${"*".repeat(300)}"]`) },
      /^a\.worker: toolsets\.workers: glob is 300 characters long; at most 256 are allowed$/,
    ],
    [
      "over-long compatible_models glob",
      { "a.worker": workerFile(`name: a\ncompatible_models: ["${"x".repeat(300)}"]`) },
      /^a\.worker: compatible_models\.0: Too big/,
    ],
    [
      "prefixed tool name over 64 chars",
      { "a.worker": workerFile(`name: a\ntoolsets:\n  ${"p".repeat(55)}: { use: files }`) },
      /^a\.worker: toolsets: tool name "p{55}_read_file" from instance .* breaks the tool-name rule/,
    ],
  ];

  it.each(cases)("%s", (_label, filesByName, expected) => {
    const found = problems(filesByName);
    expect(
      found.some((p) => expected.test(p)),
      `problems were:\n${found.join("\n")}`,
    ).toBe(true);
  });

  it("reports every problem of every file at once and loads nothing", () => {
    const found = problems({
      "a.worker": workerFile("name: a\ncolour: blue"),
      "b.worker": workerFile("name: b\ntoolsets:\n  workers: [ghost]"),
      "c.worker": ok("c"),
    });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^a\.worker/);
    expect(found[1]).toMatch(/^b\.worker/);
  });

  it("reports all five problems of one file: name, unknown key, unknown kind, glob matching nothing, approval value", () => {
    const found = problems({
      "a.worker": workerFile(`
name: has space
colour: blue
toolsets:
  db: { use: postgres, host: db.internal }
  workers: ["label-*"]
approval:
  db_query: ask
  db_drop: maybe`),
      "b.worker": ok("b"),
    });
    // Nothing cascades: no config check of the unknown kind's instance, no "no tool db_query" while its tools are unknown.
    expect(found.sort()).toEqual([
      'a.worker: approval.db_drop: must be allow, ask or deny (got "maybe")',
      "a.worker: colour: unknown key",
      "a.worker: name: must be 1-64 characters of a-z A-Z 0-9 _ - (the OpenAI tool-name rule)",
      'a.worker: toolsets.db.use: unknown toolset kind "postgres"; known: files, http',
      'a.worker: toolsets.workers: glob "label-*" matches no worker; known: b',
    ]);
  });

  it("a reference to a worker whose file was refused for its name is not reported again", () => {
    const found = problems({
      "a.worker": workerFile('name: a\ntoolsets:\n  workers: [b, "c*"]'),
      "b.worker": workerFile("name: b\ntoolsets: { files: ["),
      "c.worker": workerFile("name: c d"),
    });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^b\.worker: \(frontmatter\): malformed YAML/);
    expect(found[1]).toMatch(/^c\.worker: name: /);
  });

  it("accepts a good catalog and resolves globs to sorted worker names", () => {
    const cat = loadCatalog(
      {
        "lead.worker": workerFile('name: lead\ntoolsets:\n  workers: ["label-*", summarizer]'),
        "summarizer.worker": ok("summarizer"),
        "labels/label-bug.worker": ok("label-bug"),
        "labels/label-docs.worker": ok("label-docs"),
        "triggers.yaml": "not a worker file: ignored here",
      },
      kinds,
      parseYaml,
    );
    expect(cat.get("lead")!.workerTools).toEqual(["label-bug", "label-docs", "summarizer"]);
    expect([...cat.workers.keys()].sort()).toEqual(["label-bug", "label-docs", "lead", "summarizer"]);
  });

  it("the bundled catalog under workers/ loads", async () => {
    const { catalog } = await import("../../src/catalog");
    expect(catalog().workers.size).toBeGreaterThan(0);
  });
});

describe("triggers.yaml is checked with the catalog", () => {
  it("refuses bad triggers with file: field: reason", async () => {
    const { loadApp } = await import("../../src/catalog");
    const worker = workerFile("name: echo\ninput:\n  type: object\n  properties: { kind: { type: string } }");
    const refused = (yaml: string) => {
      try {
        loadApp({ "workers/echo.worker": worker, "workers/triggers.yaml": yaml }, parseYaml);
      } catch (e) {
        return (e as CatalogError).problems.map((p) => p.message);
      }
      throw new Error("accepted");
    };
    expect(refused("t:\n  worker: ghost\n  verify: { scheme: token, secret_env: S }\n  input: {}")).toEqual([
      'workers/triggers.yaml: t.worker: unknown worker "ghost"; known: echo',
    ]);
    expect(refused("t:\n  worker: echo\n  verify: { scheme: github, secret_env: lower }\n  input: {}")[0]).toMatch(
      /^workers\/triggers\.yaml: t\.verify\.secret_env: must name an environment variable/,
    );
    expect(refused("t:\n  worker: echo\n  verify: { scheme: carrier-pigeon, secret_env: S }\n  input: {}")[0]).toMatch(
      /^workers\/triggers\.yaml: t\.verify\.scheme: /,
    );
    expect(refused("t:\n  worker: echo\n  verify: { scheme: token, secret_env: S }\n  input: { kind: issue/title }")[0]).toMatch(
      /^workers\/triggers\.yaml: t\.input\.kind: must be a JSON pointer/,
    );
    expect(refused("t:\n  worker: echo\n  verify: { scheme: token, secret_env: S }\n  input: { knd: /kind }")).toEqual([
      'workers/triggers.yaml: t.input.knd: worker "echo" has no input field "knd"; its fields: kind',
    ]);
    expect(refused("t: [")[0]).toMatch(/^workers\/triggers\.yaml: \(file\): malformed YAML/);
  });

  it("a trigger naming a worker whose file was refused for its name is not reported again", async () => {
    const { loadApp } = await import("../../src/catalog");
    let found: string[] = [];
    try {
      loadApp(
        {
          "workers/echo.worker": workerFile("name: echo\ntoolsets: { files: ["),
          "workers/triggers.yaml": "t:\n  worker: echo\n  verify: { scheme: token, secret_env: S }\n  input: {}",
        },
        parseYaml,
      );
    } catch (e) {
      found = (e as CatalogError).problems.map((p) => p.message);
    }
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^workers\/echo\.worker: \(frontmatter\): malformed YAML/);
  });

  it("reports the problems of two worker files and triggers.yaml together", async () => {
    const { loadApp } = await import("../../src/catalog");
    let found: string[] = [];
    try {
      loadApp(
        {
          "workers/a.worker": workerFile(`
name: a
model: anthropic:claude
max_turns: 0
toolsets:
  src: { use: files, root: ../etc }
  files: { use: files }
approval:
  notify: not-an-email
  wirte_file: allow`),
          "workers/b.worker": `---\nname: a\ntoolsets:\n  web: [http]\n  http: { use: http, allow: [] }\napproval:\n  fetch: maybe\n---\n`,
          "workers/triggers.yaml":
            "t:\n  worker: a\n  verify: { scheme: token, secret_env: S }\n  input: { nope: /x }\nu:\n  worker: ghost\n  verify: { scheme: token, secret_env: S }\n  input: {}",
        },
        parseYaml,
      );
    } catch (e) {
      found = (e as CatalogError).problems.map((p) => p.message);
    }
    const expected = [
      /^workers\/a\.worker: max_turns: Too small/,
      /^workers\/a\.worker: approval\.notify: Invalid email/,
      /^workers\/a\.worker: model: unknown provider "anthropic"/,
      /^workers\/a\.worker: toolsets\.src\.root: must be an absolute path/,
      /^workers\/a\.worker: approval\.wirte_file: no tool "wirte_file" in this worker; its tools: src_read_file, /,
      /^workers\/b\.worker: instructions: empty/,
      /^workers\/b\.worker: toolsets\.web: must be \{use: <kind>, \.\.\.config\}/,
      /^workers\/b\.worker: approval\.fetch: must be allow, ask or deny/,
      /^workers\/b\.worker: name: "a" is also the name of workers\/a\.worker/,
      /^workers\/b\.worker: toolsets\.http\.allow: Too small/,
      /^workers\/triggers\.yaml: t\.input\.nope: worker "a" has no input field "nope"/,
      /^workers\/triggers\.yaml: u\.worker: unknown worker "ghost"; known: a$/,
    ];
    for (const re of expected)
      expect(
        found.some((p) => re.test(p)),
        `${re} not in:\n${found.join("\n")}`,
      ).toBe(true);
    expect(found, found.join("\n")).toHaveLength(expected.length);
  });
});
