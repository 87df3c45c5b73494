import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CatalogError, executeRun, files, loadCatalog, MemoryJournalStore, MemoryStateBackend, modelResolver, toolsetRegistry } from "../../src/engine";
import { parseYaml } from "../../src/build/yaml";
import { parseModelsFiles, providerNames } from "../../src/engine/model/providers";
import { workerFile } from "./helpers";

const problemsOf = (yaml: string, more: Record<string, string> = {}) =>
  parseModelsFiles({ "workers/models.yaml": yaml, ...more }, parseYaml).problems.map((p) => p.message);

describe("models.yaml is checked with the catalog, problems as file: field: reason", () => {
  it.each([
    ["unknown key", "providers:\n  a: { base_url: 'https://x.example/v1', apikey: k }", /^workers\/models\.yaml: providers\.a\.apikey: unknown key$/],
    ["base_url not a URL", "providers:\n  a: { base_url: 'not a url' }", /^workers\/models\.yaml: providers\.a\.base_url: must be an http\(s\) URL$/],
    ["base_url of another scheme", "providers:\n  a: { base_url: 'file:///etc' }", /^workers\/models\.yaml: providers\.a\.base_url: must be an http\(s\) URL$/],
    ["no base_url", "providers:\n  a: { api_key: k }", /^workers\/models\.yaml: providers\.a\.base_url: /],
    ["binding with an OpenAI field", "providers:\n  w: { binding: AI, api_key: k }", /^workers\/models\.yaml: providers\.w\.api_key: unknown key$/],
    ["bad binding name", "providers:\n  w: { binding: 'a-i' }", /^workers\/models\.yaml: providers\.w\.binding: must name a binding/],
    ["redeclared openai", "providers:\n  openai: { base_url: 'https://x.example/v1' }", /^workers\/models\.yaml: providers\.openai: "openai" is built in/],
    [
      "provider name with a capital",
      "providers:\n  Big: { base_url: 'https://x.example/v1' }",
      /^workers\/models\.yaml: providers\.Big: a provider name is lowercase/,
    ],
    ["timeout not a number", "providers:\n  a: { base_url: 'https://x.example/v1', timeout_ms: soon }", /^workers\/models\.yaml: providers\.a\.timeout_ms: /],
    ["stream not a boolean", "providers:\n  a: { base_url: 'https://x.example/v1', stream: 'no' }", /^workers\/models\.yaml: providers\.a\.stream: /],
    ["stream on Workers AI", "providers:\n  w: { binding: AI, stream: false }", /^workers\/models\.yaml: providers\.w\.stream: unknown key$/],
    [
      "price for an unknown provider",
      "prices:\n  'nope:m': { input: 1, output: 2 }",
      /^workers\/models\.yaml: prices\.nope:m: unknown provider "nope"; known: openai, test$/,
    ],
    ["price not a model id", "prices:\n  gpt: { input: 1, output: 2 }", /^workers\/models\.yaml: prices\.gpt: must be "provider:model"/],
    ["negative price", "prices:\n  'openai:x': { input: -1, output: 2 }", /^workers\/models\.yaml: prices\.openai:x\.input: /],
    ["malformed YAML", "providers: { a: [", /^workers\/models\.yaml: \(file\): malformed YAML/],
  ])("%s", (_label, yaml, expected) => {
    const found = problemsOf(yaml);
    expect(
      found.some((p) => expected.test(p)),
      `problems were:\n${found.join("\n")}`,
    ).toBe(true);
  });

  it("a provider declared in two models.yaml files is refused, naming both", () => {
    expect(
      problemsOf("providers:\n  a: { base_url: 'https://x.example/v1' }", { "tests/models.yaml": "providers:\n  a: { base_url: 'https://y.example/v1' }" }),
    ).toEqual(["tests/models.yaml: providers.a: also declared in workers/models.yaml; provider names are unique"]);
  });

  it("accepts ${NAME}s anywhere and keeps them for use time; the bundled models.yaml loads", () => {
    const { config, problems } = parseModelsFiles(
      {
        "m/models.yaml":
          "providers:\n  a: { base_url: '${A_URL}', api_key: '${A_KEY}', stream: false }\n  w: { binding: AI, gateway: gw }\nprices:\n  'a:m': { input: 1, output: 2 }",
      },
      parseYaml,
    );
    expect(problems).toEqual([]);
    expect(providerNames(config)).toEqual(["openai", "test", "a", "w"]);
    expect(config.providers.a).toEqual({
      file: "m/models.yaml",
      kind: "openai-compatible",
      config: { base_url: "${A_URL}", api_key: "${A_KEY}", stream: false },
    });
    expect(config.providers.w).toMatchObject({ kind: "workers-ai", config: { binding: "AI", gateway: "gw" } });
    expect(config.prices).toEqual({ "a:m": { input: 1, output: 2 } });
  });
});

describe("a worker naming an unknown provider refuses the catalog", () => {
  const refused = async (filesByName: Record<string, string>) => {
    const { loadApp } = await import("../../src/catalog");
    try {
      loadApp(filesByName, parseYaml);
    } catch (e) {
      expect(e).toBeInstanceOf(CatalogError);
      return (e as CatalogError).problems.map((p) => p.message);
    }
    throw new Error("accepted");
  };
  const models = "providers:\n  local: { base_url: 'http://127.0.0.1:8000/v1' }\n";

  it("in model and in compatible_models, naming file, field and the known providers", async () => {
    expect(
      await refused({
        "workers/models.yaml": models,
        "workers/a.worker": workerFile("name: a\nmodel: anthropic:claude-sonnet-4-5"),
        "workers/b.worker": workerFile("name: b\ncompatible_models: ['local:*', 'opneai:gpt-*', '*:mini']"),
      }),
    ).toEqual([
      'workers/a.worker: model: unknown provider "anthropic"; known: openai, test, local',
      'workers/b.worker: compatible_models.1: unknown provider "opneai"; known: openai, test, local',
    ]);
  });

  it("lists models.yaml's problems together with the workers'", async () => {
    expect(
      await refused({
        "workers/models.yaml": "providers:\n  local: { base_url: nope }",
        "workers/a.worker": workerFile("name: a\nmodel: local:m\ncolour: blue"),
      }),
    ).toEqual(["workers/models.yaml: providers.local.base_url: must be an http(s) URL", "workers/a.worker: colour: unknown key"]);
  });

  it("accepts a worker on a declared provider", async () => {
    const { loadApp } = await import("../../src/catalog");
    const app = loadApp({ "workers/models.yaml": models, "workers/a.worker": workerFile("name: a\nmodel: local:qwen3") }, parseYaml);
    expect(app.catalog.get("a")!.model).toBe("local:qwen3");
    expect(Object.keys(app.models.providers)).toEqual(["local"]);
  });
});

describe("OpenAI-compatible providers get only what their own config names", () => {
  const models = (yaml: string) => parseModelsFiles({ "workers/models.yaml": yaml }, parseYaml).config;
  const worker = workerFile("name: w\nmodel: p:m");
  const run = async (yaml: string, vars: Record<string, string>) => {
    const config = models(yaml);
    const catalog = loadCatalog({ "w.worker": worker }, toolsetRegistry(files), parseYaml, providerNames(config));
    const states = new MemoryStateBackend();
    return executeRun({ catalog, states, models: modelResolver({ providers: config.providers, vars }), vars }, new MemoryJournalStore(), {
      runId: crypto.randomUUID(),
      worker: "w",
      input: { input: "x" },
    });
  };
  const script = async (id: string, replies: unknown[]) => {
    await fetch(`${env.FAKE_OPENAI_URL}/scripts/${id}`, { method: "PUT", body: JSON.stringify(replies) });
    return async () => (await (await fetch(`${env.FAKE_OPENAI_URL}/scripts/${id}`)).json()) as { authorizations: Array<string | null> };
  };

  it("a provider without api_key sends no Authorization at all, never OPENAI_API_KEY (which nodejs_compat puts in process.env)", async () => {
    const id = `keyless-${crypto.randomUUID()}`;
    const seen = await script(id, [{ text: "hi" }]);
    const out = await run(`providers:\n  p: { base_url: "${env.FAKE_OPENAI_URL}/scripts/${id}/v1" }`, { OPENAI_API_KEY: "sk-test" });
    expect(out).toMatchObject({ status: "succeeded", output: "hi" });
    expect((await seen()).authorizations).toEqual([null]);
  });

  it("a missing ${NAME} fails the run naming file, field and var", async () => {
    const out = await run('providers:\n  p: { base_url: "https://p.example/v1", api_key: "${P_KEY}" }', {});
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "model_error", message: expect.stringContaining("workers/models.yaml: providers.p.api_key: uses ${P_KEY}, which is not set") },
    });
  });

  it("an upstream error echoing the resolved key is recorded without it", async () => {
    const id = `echo-${crypto.randomUUID()}`;
    await script(id, [{ status: 401, body: { error: { message: "Incorrect API key provided: sk-very-secret-key" } } }]);
    const out = await run(`providers:\n  p: { base_url: "${env.FAKE_OPENAI_URL}/scripts/${id}/v1", api_key: "\${P_KEY}", max_retries: 0 }`, {
      P_KEY: "sk-very-secret-key",
    });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "model_error", message: expect.stringContaining("Incorrect API key provided: [redacted:P_KEY]") },
    });
    expect(JSON.stringify(out)).not.toContain("sk-very-secret-key");
  });

  it("stream: false reaches the provider's client: live text asked for, the request is still not streamed", async () => {
    const id = `nostream-${crypto.randomUUID()}`;
    await fetch(`${env.FAKE_OPENAI_URL}/scripts/${id}?refuse_stream=1`, { method: "PUT", body: JSON.stringify([{ text: "whole" }]) });
    const { providers } = models(`providers:\n  p: { base_url: "${env.FAKE_OPENAI_URL}/scripts/${id}/v1", stream: false, max_retries: 0 }`);
    const res = await modelResolver({ providers })("p:m").request({ messages: [{ role: "user", content: "hi" }], tools: [], onDelta: () => {} });
    expect(res).toEqual({ text: "whole", toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 } });
    const { requests } = (await (await fetch(`${env.FAKE_OPENAI_URL}/scripts/${id}`)).json()) as { requests: Array<{ stream?: boolean }> };
    expect(requests.map((r) => r.stream ?? false)).toEqual([false]);
  });

  it("an unknown provider at run time (not via the catalog) names the ones there are", () => {
    expect(() => modelResolver({ providers: models("providers:\n  p: { base_url: 'https://p.example/v1' }").providers })("q:m")).toThrow(
      'unknown model "q:m": use openai:<model>, p:<model>, test:tools',
    );
  });
});
