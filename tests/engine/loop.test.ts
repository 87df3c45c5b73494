import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, MemoryJournalStore, scriptedModel, tool, type ApprovalDecision, type ModelRequest } from "../../src/engine";
import { MAX_ARGS_DEPTH } from "../../src/engine/journal/bounds";
import { counterKind, harness, workerFile } from "./helpers";

const toolResults = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));

describe("agent loop", () => {
  it("unknown tools, invalid JSON, invalid or too deeply nested arguments go back to the model as error results; the run goes on", async () => {
    let seen: string[] = [];
    const model = scriptedModel((req, n) => {
      if (n === 0) {
        return {
          toolCalls: [
            { name: "nope", args: {} },
            { name: "read_file", arguments: "{not json" },
            { name: "read_file", args: { path: 42 } },
            // Hostile: nested past what SQLite's JSON reads (an approval's remembered args would wedge the run).
            { name: "read_file", arguments: `{"path":${"[".repeat(1000)}${"]".repeat(1000)}}` },
          ],
        };
      }
      seen = toolResults(req);
      return { text: "recovered" };
    });
    const h = harness({ "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  files: { use: files }") }, { models: { "test:m": model } });
    expect(await h.run({ worker: "w", input: { input: "x" } })).toMatchObject({ status: "succeeded", output: "recovered" });
    expect(seen[0]).toBe('Error: unknown tool "nope"; available: read_file, list_files, write_file, delete_file');
    expect(seen[1]).toBe("Error: the arguments for read_file are not valid JSON: {not json");
    expect(seen[2]).toMatch(/^Error: invalid arguments for read_file: path: Invalid input: expected string, received number$/);
    expect(seen[3]).toBe(`Error: the arguments for read_file nest deeper than ${MAX_ARGS_DEPTH} levels`);
  });

  it("runs the tool calls of one turn concurrently", async () => {
    let running = 0;
    let peak = 0;
    const slow = defineToolset({
      kind: "slow",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        wait: tool({
          description: "waits",
          input: z.strictObject({}),
          readOnly: true,
          async run() {
            peak = Math.max(peak, ++running);
            await new Promise((r) => setTimeout(r, 20));
            running--;
            return "waited";
          },
        }),
      },
    });
    const model = scriptedModel([{ toolCalls: [1, 2, 3].map(() => ({ name: "wait", args: {} })) }, { text: "ok" }]);
    const h = harness({ "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  slow: { use: slow }") }, { kinds: [slow], models: { "test:m": model } });
    await h.run({ worker: "w", input: { input: "x" } });
    expect(peak).toBe(3);
  });

  it("enforces max_turns with a clear error", async () => {
    const { kind } = counterKind();
    const model = scriptedModel(() => ({ toolCalls: [{ name: "increment", args: {} }] }));
    const h = harness(
      { "w.worker": workerFile("name: w\nmodel: test:m\nmax_turns: 3\ntoolsets:\n  counter: { use: counter }") },
      { kinds: [kind], models: { "test:m": model } },
    );
    const out = await h.run({ worker: "w", input: { input: "x" } });
    expect(out).toMatchObject({ status: "failed", error: { code: "max_turns", message: "w.worker: no final answer within max_turns (3)" } });
    expect(model.requests).toBe(3);
  });

  const structured = (model: string) =>
    workerFile(`name: labeler\nmodel: ${model}\noutput:\n  type: object\n  properties: { label: { enum: [bug, docs] } }\n  required: [label]`);

  it("validates the output schema, retrying once with the validation error", async () => {
    let retryPrompt = "";
    const model = scriptedModel((req, n) => {
      if (n === 1) retryPrompt = String(req.messages.at(-1)!.content);
      return { text: n === 0 ? '{"label": "feature"}' : '```json\n{"label": "bug"}\n```' };
    });
    const h = harness({ "l.worker": structured("test:m") }, { models: { "test:m": model } });
    expect(await h.run({ worker: "labeler", input: { input: "crash" } })).toMatchObject({ status: "succeeded", output: { label: "bug" } });
    expect(retryPrompt).toMatch(/does not match the output schema: label: Instance does not match any of \["bug","docs"\]\. Answer again/);
  });

  it("reads a fenced answer padded with a long run of spaces (the old fence regex was quadratic in it)", async () => {
    // 400 000 spaces: the old /\s*```\s*$/g scan took minutes here, far past the test timeout.
    const padding = " ".repeat(400_000);
    const model = scriptedModel(() => ({ text: `${padding}\`\`\`json\n{"label": "docs"}\n${padding}\`\`\`${padding}` }));
    const h = harness({ "l.worker": structured("test:m") }, { models: { "test:m": model } });
    expect(await h.run({ worker: "labeler", input: { input: "x" } })).toMatchObject({ status: "succeeded", output: { label: "docs" } });
  });

  it("fails clearly when the output is still invalid after the retry", async () => {
    const model = scriptedModel([{ text: "not json" }, { text: '{"label": 1}' }, { text: '{"label":"bug"}' }]);
    const h = harness({ "l.worker": structured("test:m") }, { models: { "test:m": model } });
    const out = await h.run({ worker: "labeler", input: { input: "crash" } });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "invalid_output", message: expect.stringMatching(/^l\.worker: final answer does not match the output schema after one retry: label: /) },
    });
    expect(model.requests).toBe(2);
  });

  it("test:tools answers schema-valid JSON for an output schema", async () => {
    const h = harness({ "l.worker": structured("test:tools") });
    expect(await h.run({ worker: "labeler", input: { input: "x" } })).toMatchObject({ status: "succeeded", output: { label: "bug" } });
  });

  it("resolves the model: worker's own > caller's > DEFAULT_MODEL, and refuses one outside compatible_models", async () => {
    const a = scriptedModel((req) => {
      if (req.messages[1]!.content === "c") return { text: "child ran on a" };
      return toolResults(req).length
        ? { text: toolResults(req).join(" | ") }
        : {
            toolCalls: [
              { name: "child", args: { input: "c" } },
              { name: "picky", args: { input: "p" } },
            ],
          };
    });
    const b = scriptedModel(() => ({ text: "from b" }));
    const h = harness(
      {
        "parent.worker": workerFile("name: parent\ntoolsets:\n  workers: [child, picky]"),
        "child.worker": workerFile("name: child"),
        "picky.worker": workerFile("name: picky\ncompatible_models: ['OPENAI:gpt-4*']"),
        "own.worker": workerFile("name: own\nmodel: test:b"),
      },
      { models: { "test:a": a, "test:b": b }, defaultModel: "test:a" },
    );
    const out = await h.run({ worker: "parent", input: { input: "x" } });
    expect(out).toMatchObject({ status: "succeeded" });
    // child inherited test:a (the caller's); picky refused it.
    expect((out as { output: string }).output).toBe('child ran on a | Error: picky.worker: model "test:a" is not in compatible_models (OPENAI:gpt-4*)');
    expect(await h.run({ worker: "own", input: { input: "x" } })).toMatchObject({ output: "from b" });
  });

  it("max_tokens: a run over budget stops with the budget error and makes no further model request", async () => {
    const { kind } = counterKind();
    const model = scriptedModel(() => ({ toolCalls: [{ name: "increment", args: {} }], usage: { inputTokens: 60, outputTokens: 10 } }));
    const h = harness(
      { "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  counter: { use: counter }") },
      { kinds: [kind], models: { "test:m": model } },
    );
    const out = await h.run({ worker: "w", input: { input: "x" }, budget: { maxTokens: 200 } });
    expect(out).toMatchObject({ status: "failed", error: { code: "budget_exceeded", message: "run budget exceeded: 210 tokens used, max_tokens is 200" } });
    expect(model.requests).toBe(3);
    expect(out.usage.inputTokens + out.usage.outputTokens).toBe(210);
  });

  it("max_cost_usd stops the run from inside a nested worker too", async () => {
    const parent = scriptedModel(() => ({ toolCalls: [{ name: "child", args: { input: "again" } }], usage: { inputTokens: 1000, outputTokens: 0 } }));
    const child = scriptedModel(() => ({ text: "child", usage: { inputTokens: 1000, outputTokens: 0 } }));
    const h = harness(
      { "p.worker": workerFile("name: p\nmodel: test:p\ntoolsets:\n  workers: [child]"), "c.worker": workerFile("name: child\nmodel: test:c") },
      { models: { "test:p": parent, "test:c": child }, prices: { "test:p": { input: 1, output: 0 }, "test:c": { input: 1, output: 0 } } },
    );
    const out = await h.run({ worker: "p", input: { input: "x" }, budget: { maxCostUsd: 0.0025 } });
    expect(out).toMatchObject({ status: "failed", error: { code: "budget_exceeded" } });
    expect(parent.requests + child.requests).toBe(3);
  });

  it("a model's answer is journaled as its text, tool calls and usage with the model and cost: fields a model adds beyond them are not kept", async () => {
    const raw = { text: "done", toolCalls: [], usage: { inputTokens: 3, outputTokens: 2 }, providerDebug: "x".repeat(1000) };
    const model = { request: async () => raw };
    const h = harness({ "w.worker": workerFile("name: w\nmodel: test:m") }, { models: { "test:m": model } });
    const store = new MemoryJournalStore();
    expect(await h.run({ worker: "w", input: { input: "x" } }, store)).toMatchObject({ status: "succeeded", output: "done" });
    expect(store.entries.get("w/turn:1/model")).toEqual({
      text: "done",
      toolCalls: [],
      usage: { inputTokens: 3, outputTokens: 2 },
      model: "test:m",
      costUsd: 0,
      // The request's fingerprint (model-step.ts): a replay that asks something else here fails.
      fp: expect.any(Number),
    });
  });
});

describe("approvals in the engine", () => {
  const writer = workerFile(`name: writer\nmodel: test:w\ntoolsets:\n  files: { use: files }\napproval:\n  notify: ops@example.com`);
  const script = () =>
    scriptedModel((req, n) =>
      n === 0 ? { toolCalls: [{ name: "write_file", args: { path: "a.txt", content: "hi" } }] } : { text: `after: ${toolResults(req)[0]}` },
    );

  it("ask: suspends with a pending approval; a recorded approval resumes and runs the tool once", async () => {
    const model = script();
    const h = harness({ "w.worker": writer }, { models: { "test:w": model } });
    const store = new MemoryJournalStore();
    const first = await h.run({ worker: "writer", input: { input: "x" }, runId: "r1" }, store);
    expect(first.status).toBe("awaiting_approval");
    const [pending] = (first as { pending: any[] }).pending;
    expect(pending).toMatchObject({
      key: "writer/turn:1/tool:1/approval",
      tool: "write_file",
      args: { path: "a.txt", content: "hi" },
      workerChain: ["writer"],
      notify: "ops@example.com",
      description: "writer wants to call write_file",
    });
    expect(pending.id).toMatch(/^ap_[0-9a-f]{24}$/);

    // Resuming without a decision asks again for the same approval, without a model request.
    expect(await h.run({ worker: "writer", input: { input: "x" }, runId: "r1" }, store)).toMatchObject({
      status: "awaiting_approval",
      pending: [{ id: pending.id }],
    });
    expect(model.requests).toBe(1);

    store.put(pending.key, { approved: true, by: "alice" } satisfies ApprovalDecision);
    const done = await h.run({ worker: "writer", input: { input: "x" }, runId: "r1" }, store);
    expect(done).toMatchObject({ status: "succeeded", output: 'after: {"path":"/a.txt","written_chars":2}' });
    expect(model.requests).toBe(2);
  });

  it("a rejection goes back to the model as the tool's result", async () => {
    const h = harness({ "w.worker": writer }, { models: { "test:w": script() } });
    const store = new MemoryJournalStore();
    const first = await h.run({ worker: "writer", input: { input: "x" }, runId: "r2" }, store);
    store.put((first as { pending: Array<{ key: string }> }).pending[0]!.key, { approved: false, by: "bob", note: "not today" });
    expect(await h.run({ worker: "writer", input: { input: "x" }, runId: "r2" }, store)).toMatchObject({
      status: "succeeded",
      output: "after: Error: the call to write_file was rejected by bob: not today",
    });
  });

  it("deny never asks and returns an error result; allow overrides a kind's ask default", async () => {
    const denied = workerFile(`name: d\nmodel: test:w\ntoolsets:\n  files: { use: files }\napproval:\n  write_file: deny`);
    const allowed = workerFile(`name: a\nmodel: test:w2\ntoolsets:\n  files: { use: files }\napproval:\n  write_file: allow`);
    const h = harness({ "d.worker": denied, "a.worker": allowed }, { models: { "test:w": script(), "test:w2": script() } });
    expect(await h.run({ worker: "d", input: { input: "x" } })).toMatchObject({
      output: 'after: Error: tool "write_file" is denied by the approval policy of worker "d"',
    });
    expect(await h.run({ worker: "a", input: { input: "x" } })).toMatchObject({ output: 'after: {"path":"/a.txt","written_chars":2}' });
  });

  it("approval_mode approve_all / reject_all decide without asking, and the decision is journaled", async () => {
    const h = harness({ "w.worker": writer }, { models: { "test:w": script() } });
    const store = new MemoryJournalStore();
    expect(await h.run({ worker: "writer", input: { input: "x" }, approvalMode: "approve_all" }, store)).toMatchObject({
      status: "succeeded",
      output: expect.stringContaining("written_chars"),
    });
    expect(store.entries.get("writer/turn:1/tool:1/approval")).toEqual({
      approved: true,
      by: "approval_mode approve_all",
      args_hash: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const h2 = harness({ "w.worker": writer }, { models: { "test:w": script() } });
    expect(await h2.run({ worker: "writer", input: { input: "x" }, approvalMode: "reject_all" })).toMatchObject({
      output: "after: Error: the call to write_file was rejected by approval_mode reject_all",
    });
  });

  it("an approval asked three workers deep suspends the run with the inner tool and its chain; deciding resumes it", async () => {
    const relay = (to: string) =>
      scriptedModel((req, n) => (n === 0 ? { toolCalls: [{ name: to, args: { input: "deeper" } }] } : { text: `${to} said ${toolResults(req)[0]}` }));
    const models = { "test:a": relay("b"), "test:b": relay("writer"), "test:w": script() };
    const h = harness(
      {
        "a.worker": workerFile("name: a\nmodel: test:a\ntoolsets:\n  workers: [b]"),
        "b.worker": workerFile("name: b\nmodel: test:b\ntoolsets:\n  workers: [writer]"),
        "w.worker": writer,
      },
      { models },
    );
    const store = new MemoryJournalStore();
    const first = await h.run({ worker: "a", input: { input: "x" }, runId: "deep" }, store);
    expect(first).toMatchObject({
      status: "awaiting_approval",
      pending: [{ tool: "write_file", workerChain: ["a", "b", "writer"], description: "a → b → writer wants to call write_file" }],
    });
    const key = (first as { pending: Array<{ key: string }> }).pending[0]!.key;
    expect(key).toBe("a/turn:1/tool:1/b/turn:1/tool:1/writer/turn:1/tool:1/approval");
    store.put(key, { approved: true, by: "carol" });
    const done = await h.run({ worker: "a", input: { input: "x" }, runId: "deep" }, store);
    expect(done).toMatchObject({ status: "succeeded", output: 'b said writer said after: {"path":"/a.txt","written_chars":2}' });
    expect(models["test:a"].requests + models["test:b"].requests + models["test:w"].requests).toBe(6);
  });
});
