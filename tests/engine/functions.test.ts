import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadApp } from "../../src/catalog";
import { parseJson } from "../../src/engine/data-files";
import {
  CatalogError,
  defineFunction,
  executeRun,
  MemoryJournalStore,
  MemoryStateBackend,
  modelResolver,
  scriptedModel,
  type ModelRequest,
  type ScriptedReply,
} from "../../src/engine";
import { files as workerFiles } from "../../src/edgework.generated";
import { mapInput } from "../../src/triggers/delivery";
import type { Trigger } from "../../src/triggers/triggers-file";
import { effectCount } from "../durable-objects/helpers";
import { harness, workerFile } from "./helpers";

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof CatalogError) return err.problems.map((p) => p.message);
    throw err;
  }
  throw new Error("the catalog was accepted");
};

const shout = defineFunction({
  name: "shout",
  description: "Upper-case a word",
  input: z.strictObject({ word: z.string().min(1) }),
  run: ({ word }) => word.toUpperCase(),
});

describe("code functions in the catalog", () => {
  it("a name used by a .worker file and a function refuses the catalog, naming both", () => {
    const clash = defineFunction({ ...shout, name: "summarizer" } as Parameters<typeof defineFunction>[0]);
    expect(refusal(() => harness({ "workers/summarizer.worker": workerFile("name: summarizer") }, { functions: [clash] }))).toEqual([
      'function "summarizer": name: "summarizer" is also the name of workers/summarizer.worker; worker names are unique (functions share their namespace)',
    ]);
  });

  it("a function's toolsets and approval are checked like a worker file's, every problem at once", () => {
    const bad = defineFunction({
      name: "bad",
      description: "",
      input: z.strictObject({}),
      toolsets: { gh: { use: "htp" }, src: { use: "files", root: 7 }, workers: ["ghost"] },
      approval: { nothing_fetch: "ask" },
      run: () => null,
    });
    expect(refusal(() => harness({}, { functions: [bad] }))).toEqual([
      'function "bad": description: required: callers\' models read it',
      'function "bad": toolsets.gh.use: unknown toolset kind "htp"; known: files, http',
      'function "bad": toolsets.src.root: Invalid input: expected string, received number',
      'function "bad": toolsets.workers: unknown worker "ghost"; known: bad',
    ]);
  });
});

describe("calling a function", () => {
  it("a worker lists it in workers: and calls it as a tool named after it, with its zod input as JSON Schema", async () => {
    let offered: ModelRequest["tools"] = [];
    const lead = scriptedModel((req, n) => {
      offered = req.tools;
      return n === 0
        ? {
            toolCalls: [
              { name: "shout", args: { word: "hi" } },
              { name: "shout", args: { word: "" } },
            ],
          }
        : { text: "done" };
    });
    const h = harness(
      { "lead.worker": workerFile("name: lead\nmodel: test:lead\ntoolsets:\n  workers: [shout]") },
      { functions: [shout], models: { "test:lead": lead } },
    );
    const store = new MemoryJournalStore();
    expect(await h.run({ worker: "lead", input: { input: "x" } }, store)).toMatchObject({ status: "succeeded", output: "done" });
    expect(offered).toEqual([
      {
        name: "shout",
        description: "Upper-case a word",
        parameters: { type: "object", properties: { word: { type: "string", minLength: 1 } }, required: ["word"], additionalProperties: false },
      },
    ]);
    expect(store.entries.get("lead/turn:1/tool:1/result")).toMatchObject({ ok: true, value: "HI" });
    expect(store.entries.get("lead/turn:1/tool:2/result")).toMatchObject({ ok: false, error: expect.stringMatching(/^invalid arguments for shout: word: /) });
  });

  it("its ctx reaches workers, the model and the journal like a tool's; usage rolls up; replay repeats nothing", async () => {
    const sides: string[] = [];
    const relay = defineFunction({
      name: "relay",
      description: "Summarize, ask, remember",
      input: z.strictObject({ text: z.string() }),
      output: z.strictObject({ summary: z.unknown(), verdict: z.string(), id: z.string() }),
      async run({ text }, ctx) {
        const summary = await ctx.callWorker("summarizer", { input: text });
        const verdict = await ctx.llmAsk(`Is "${String(summary)}" fine?`);
        const id = await ctx.step("side-effect", () => (sides.push(text), `side-${sides.length}`));
        return { summary, verdict, id };
      },
    });
    const model = scriptedModel((req) => ({ text: req.messages[0]!.content === "Summarize." ? "short" : "yes", usage: { inputTokens: 10, outputTokens: 1 } }));
    const h = harness(
      { "summarizer.worker": workerFile("name: summarizer", "Summarize.") },
      { functions: [relay], models: { "test:m": model }, defaultModel: "test:m" },
    );
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "relay", input: { text: "long text" } }, store);
    expect(out).toMatchObject({
      status: "succeeded",
      output: { summary: "short", verdict: "yes", id: "side-1" },
      usage: { requests: 2, inputTokens: 20, outputTokens: 2 },
    });
    expect([...store.entries.keys()]).toEqual(["relay/worker:1/summarizer/turn:1/model", "relay/worker:1/result", "relay/ask:2", "relay/step:side-effect"]);

    const again = await h.run({ worker: "relay", input: { text: "long text" }, runId: "run-1" }, store);
    expect(again).toEqual(out);
    expect(model.requests).toBe(2);
    expect(sides).toHaveLength(1);
  });

  it("input and output are checked by its zod schemas, errors naming the function and the field; a throw fails its call", async () => {
    const strict = defineFunction({
      name: "strict",
      description: "Returns what it is told",
      input: z.strictObject({ n: z.number().int(), fail: z.boolean().optional() }),
      output: z.number().max(10),
      run: ({ n, fail }) => {
        if (fail) throw new Error("no luck");
        return n;
      },
    });
    const h = harness({}, { functions: [strict] });
    expect(await h.run({ worker: "strict", input: { n: 1.5 } })).toMatchObject({
      status: "failed",
      error: { code: "invalid_input", message: expect.stringMatching(/^function "strict": input does not match its input schema: n: .*expected int/) },
    });
    expect(await h.run({ worker: "strict", input: { n: 11 } })).toMatchObject({
      status: "failed",
      error: { code: "invalid_output", message: expect.stringMatching(/^function "strict": its result does not match its output schema: \(root\): .*10/) },
    });
    expect(await h.run({ worker: "strict", input: { n: 1, fail: true } })).toMatchObject({
      status: "failed",
      error: { code: "function_failed", message: 'function "strict" failed: no luck' },
    });
  });

  it("a result too large for the journal, or not JSON, fails the call instead of every attempt to store it", async () => {
    const big = defineFunction({
      name: "big",
      description: "Returns a lot",
      input: z.strictObject({ bigint: z.boolean() }),
      run: ({ bigint }) => (bigint ? { n: 1n } : "x".repeat(2_000_000)),
    });
    const h = harness({}, { functions: [big] });
    expect(await h.run({ worker: "big", input: { bigint: false } })).toMatchObject({
      status: "failed",
      error: {
        code: "too_large",
        message: expect.stringMatching(/^function "big": its result is 2000\d{3} bytes as JSON, over the journal's bound of 1500000 bytes/),
      },
    });
    expect(await h.run({ worker: "big", input: { bigint: true } })).toMatchObject({
      status: "failed",
      error: { code: "invalid_output", message: expect.stringMatching(/^function "big": its result is not JSON: .*BigInt/) },
    });
  });

  it("a function that calls itself stops at MAX_DEPTH with the chain in the error", async () => {
    const again = defineFunction({
      name: "again",
      description: "Calls itself",
      input: z.strictObject({}),
      run: (_input, ctx) => ctx.callWorker("again", {}),
    });
    const out = await harness({}, { functions: [again], maxDepth: 3 }).run({ worker: "again", input: {} });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "function_failed", message: "call depth 4 exceeds MAX_DEPTH 3: again → again → again → again" },
    });
  });
});

describe("stabilizing the flagship: labeler.worker becomes a function, triage and its trigger unchanged", () => {
  // What the LLM labeler decided, as rules: a prompt became a program.
  const labeler = defineFunction({
    name: "labeler",
    description: "Choose the one label that fits a GitHub issue best.",
    input: z.object({ title: z.string(), body: z.string().nullable().optional() }),
    output: z.strictObject({ label: z.enum(["bug", "feature", "question", "docs"]), reason: z.string().max(200) }),
    run: ({ title, body }) => {
      const text = `${title}\n${body ?? ""}`.toLowerCase();
      if (["crash", "error", "broken"].some((w) => text.includes(w))) return { label: "bug" as const, reason: "It reports a failure." };
      if (text.includes("docs") || text.includes("readme")) return { label: "docs" as const, reason: "It is about documentation." };
      if (text.includes("?")) return { label: "question" as const, reason: "It asks for help." };
      return { label: "feature" as const, reason: "It asks for something new." };
    },
  });
  const app = Object.fromEntries(Object.entries(workerFiles).filter(([file]) => file.startsWith("workers/")));
  const { "workers/labeler.worker": _llmLabeler, ...withoutLabeler } = app;

  it("the same triage.worker and triggers.yaml text load with the function, and the webhook's run comments and labels", async () => {
    expect(_llmLabeler).toBeDefined();
    const before = loadApp(app);
    const after = loadApp(withoutLabeler, parseJson, [labeler]);
    // Byte for byte: the caller and its trigger are the bundled files themselves.
    expect(withoutLabeler["workers/triage.worker"]).toBe(workerFiles["workers/triage.worker"]);
    expect(withoutLabeler["workers/triggers.yaml"]).toBe(workerFiles["workers/triggers.yaml"]);
    expect(after.triggers.get("github-issues")).toEqual(before.triggers.get("github-issues"));
    expect(after.catalog.get("triage")).toEqual(before.catalog.get("triage"));
    expect(after.catalog.get("labeler")!.code).toBe(labeler);

    const payload = {
      action: "opened",
      repository: { full_name: "octo/hello" },
      issue: { number: 7, title: "Crash on start", body: "It crashes.", url: "https://api.github.com/repos/octo/hello/issues/7" },
    };
    const input = mapInput(after.triggers.get("github-issues") as Trigger, payload);
    const effects = `${env.FAKE_OPENAI_URL}/effects`;
    const asked: string[] = [];
    const model = scriptedModel((req): ScriptedReply => {
      const system = String(req.messages[0]!.content);
      asked.push(system.slice(0, 20));
      if (system.startsWith("Summarize")) return { text: "The app crashes on start." };
      const results = req.messages.filter((m) => m.role === "tool").map((m) => m.content);
      if (results.length === 0)
        return {
          toolCalls: [
            { name: "summarizer", args: { input: "Crash on start: It crashes." } },
            { name: "labeler", args: { title: "Crash on start", body: "It crashes." } },
          ],
        };
      if (results.length === 2) {
        const { label, reason } = JSON.parse(results[1]!) as { label: string; reason: string };
        return {
          toolCalls: [
            {
              name: "github_fetch",
              args: {
                url: `${effects}/stabilized-comment`,
                method: "POST",
                body: JSON.stringify({ body: `${results[0]}\n\nSuggested label: ${label} — ${reason}` }),
              },
            },
            { name: "github_fetch", args: { url: `${effects}/stabilized-label`, method: "POST", body: JSON.stringify({ labels: [label] }) } },
          ],
        };
      }
      return { text: `Commented and labelled: ${results.length} tool results.` };
    });
    const store = new MemoryJournalStore();
    const out = await executeRun(
      {
        catalog: after.catalog,
        models: modelResolver({ extra: { "test:triage": model } }),
        defaultModel: "test:triage",
        states: new MemoryStateBackend(),
        vars: { GITHUB_API_HOST: env.FAKE_OPENAI_HOST, GITHUB_TOKEN: "t" },
      },
      store,
      { runId: "stabilized", worker: "triage", input, approvalMode: "approve_all" },
    );
    expect(out).toMatchObject({ status: "succeeded", output: "Commented and labelled: 4 tool results." });
    expect(store.entries.get("triage/turn:1/tool:2/result")).toMatchObject({ ok: true, value: { label: "bug", reason: "It reports a failure." } });
    // The labeler is code now: no model request has its instructions.
    expect(asked.filter((s) => s.startsWith("Choose"))).toEqual([]);
    expect(asked).toHaveLength(4);
    expect(await effectCount("stabilized-comment")).toBe(1);
    expect(await effectCount("stabilized-label")).toBe(1);
  });
});
