import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { engineConfig } from "../../durable-objects/engine-config";
import { executeRun, files, loadCatalog, MemoryJournalStore, MemoryStateBackend, modelResolver, toolsetRegistry } from "../../src/engine";
import { parseYaml } from "../../src/build/yaml";
import { parseModelsFiles, providerNames } from "../../src/engine/model/providers";
import type { AiBinding } from "../../src/engine/model/workers-ai";
import { workerFile } from "./helpers";

/** A stand-in for the `AI` binding: answers from a script, records each `run()`. */
function fakeAi(replies: unknown[]) {
  const calls: Array<{ model: string; inputs: any; options?: unknown }> = [];
  const binding: AiBinding = {
    async run(model, inputs, options) {
      calls.push({ model, inputs: structuredClone(inputs), options });
      if (!replies.length) throw new Error("fake AI: no reply left");
      return replies.shift();
    },
  };
  return { binding, calls };
}

const MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

async function runOn(ai: AiBinding | undefined, yaml = "providers:\n  workers-ai: { binding: AI, gateway: my-gateway }") {
  const { config } = parseModelsFiles({ "workers/models.yaml": yaml }, parseYaml);
  const worker = workerFile(`name: reader\nmodel: workers-ai:${MODEL}\ntoolsets:\n  files: { use: files }`);
  const catalog = loadCatalog({ "r.worker": worker }, toolsetRegistry(files), parseYaml, providerNames(config));
  const models = modelResolver({ providers: config.providers, binding: (name) => (name === "AI" ? ai : undefined) });
  return executeRun({ catalog, states: new MemoryStateBackend(), models }, new MemoryJournalStore(), {
    runId: crypto.randomUUID(),
    worker: "reader",
    input: { input: "what is in notes.txt?" },
  });
}

describe("workers-ai: through the AI binding's run() with tool calling", () => {
  it("the documented shape: a tool call round-trips, then a final answer; through the AI Gateway named in models.yaml", async () => {
    const ai = fakeAi([
      {
        response: "",
        tool_calls: [{ name: "read_file", arguments: { path: "notes.txt" } }],
        usage: { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57 },
      },
      { response: "notes.txt does not exist", usage: { prompt_tokens: 80, completion_tokens: 6, total_tokens: 86 } },
    ]);
    const out = await runOn(ai.binding);
    expect(out).toMatchObject({ status: "succeeded", output: "notes.txt does not exist", usage: { requests: 2, inputTokens: 130, outputTokens: 13 } });

    const [first, second] = ai.calls;
    expect(first!.model).toBe(MODEL);
    expect(first!.options).toEqual({ gateway: { id: "my-gateway" } });
    expect(first!.inputs.messages).toEqual([
      { role: "system", content: "Do the task." },
      { role: "user", content: "what is in notes.txt?" },
    ]);
    expect(first!.inputs.tools.map((t: any) => [t.type, t.function.name])).toEqual([
      ["function", "read_file"],
      ["function", "list_files"],
      ["function", "write_file"],
      ["function", "delete_file"],
    ]);
    expect(first!.inputs.tools[0].function.parameters).toMatchObject({ type: "object", properties: { path: { type: "string" } } });
    // The call goes back with an id (made up: the documented shape has none) and the result under the same id and name.
    expect(second!.inputs.messages.slice(2)).toEqual([
      { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"notes.txt"}' } }] },
      { role: "tool", tool_call_id: "call_1", name: "read_file", content: "Error: no file at /notes.txt" },
    ]);
  });

  it("the OpenAI-compatible shape some models return (choices[0].message.tool_calls)", async () => {
    const ai = fakeAi([
      {
        choices: [
          {
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "chatcmpl-tool-1", type: "function", function: { name: "list_files", arguments: "{}" } }],
            },
          },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 5 },
      },
      { choices: [{ message: { role: "assistant", content: "no files" } }], usage: { prompt_tokens: 60, completion_tokens: 3 } },
    ]);
    const out = await runOn(ai.binding, "providers:\n  workers-ai: { binding: AI }");
    expect(out).toMatchObject({ status: "succeeded", output: "no files", usage: { inputTokens: 100, outputTokens: 8 } });
    expect(ai.calls[0]!.options).toBeUndefined();
    expect(ai.calls[1]!.inputs.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "chatcmpl-tool-1", name: "list_files", content: "[]" });
  });

  it("a structured output asks for JSON and takes a response that arrives parsed", async () => {
    const ai = fakeAi([{ response: { label: "bug" } }]);
    const { config } = parseModelsFiles({ "workers/models.yaml": "providers:\n  wai: { binding: AI }" }, parseYaml);
    const worker = workerFile(`name: j\nmodel: wai:${MODEL}\noutput:\n  type: object\n  properties: { label: { type: string } }\n  required: [label]`);
    const catalog = loadCatalog({ "j.worker": worker }, toolsetRegistry(files), parseYaml, providerNames(config));
    const out = await executeRun({ catalog, models: modelResolver({ providers: config.providers, binding: () => ai.binding }) }, new MemoryJournalStore(), {
      runId: "j",
      worker: "j",
      input: { input: "x" },
    });
    expect(out).toMatchObject({ status: "succeeded", output: { label: "bug" } });
    expect(ai.calls[0]!.inputs.response_format).toEqual({ type: "json_schema", json_schema: expect.objectContaining({ required: ["label"] }) });
    expect(ai.calls[0]!.inputs.tools).toBeUndefined();
  });

  it("a missing binding fails the run naming it and how to declare it", async () => {
    const out = await runOn(undefined);
    expect(out).toMatchObject({
      status: "failed",
      error: {
        code: "model_error",
        message: expect.stringContaining(
          'workers/models.yaml: providers.workers-ai.binding: the app has no binding "AI" (add [ai] binding = "AI" to wrangler.toml)',
        ),
      },
    });
  });

  it("an answer in no documented shape is a model error, not a silent empty answer", async () => {
    const out = await runOn(fakeAi([{ result: 42 }]).binding);
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "model_error", message: expect.stringContaining("Workers AI returned an unexpected response") },
    });
  });
});

describe("the app wires the binding and models.yaml's prices (durable-objects/engine-config.ts)", () => {
  it("workers-ai from workers/models.yaml reaches env.AI; without it the error names the binding", async () => {
    const ai = fakeAi([{ response: "hello from the edge", usage: { prompt_tokens: 3, completion_tokens: 4 } }]);
    const config = engineConfig({ ...env, AI: ai.binding } as unknown as Env, {});
    const res = await config.models(`workers-ai:${MODEL}`).request({ messages: [{ role: "user", content: "hi" }], tools: [] });
    expect(res).toEqual({ text: "hello from the edge", toolCalls: [], usage: { inputTokens: 3, outputTokens: 4 } });
    expect(ai.calls).toEqual([{ model: MODEL, inputs: { messages: [{ role: "user", content: "hi" }] }, options: undefined }]);

    const withoutAi = engineConfig({ ...env, AI: undefined } as unknown as Env, {});
    expect(() => withoutAi.models(`workers-ai:${MODEL}`)).toThrow('the app has no binding "AI"');
  });

  it("prices: built-in, then models.yaml, then the MODEL_PRICES var over both", () => {
    const prices = engineConfig(env, {}).prices!;
    expect(prices["openai:gpt-4.1-mini"]).toEqual({ input: 0.4, output: 1.6 });
    expect(prices["beta:helper"]).toEqual({ input: 10, output: 20 }); // tests/fixtures/workers/models.yaml
    const overridden = engineConfig({ ...env, MODEL_PRICES: '{"beta:helper": {"input": 1, "output": 1}}' }, {}).prices!;
    expect(overridden["beta:helper"]).toEqual({ input: 1, output: 1 });
  });
});
