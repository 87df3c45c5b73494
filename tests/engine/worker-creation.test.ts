import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CatalogError, defineToolset, executeRun, MemoryJournalStore, scriptedModel, tool, workerCreation, type ModelRequest } from "../../src/engine";
import { callTree } from "../../src/engine/journal/call-tree";
import { blowupSchema } from "../support/hostile-schemas";
import { harness, workerFile } from "./helpers";

const turnOf = (req: ModelRequest) => req.messages.filter((m) => m.role === "assistant").length;
const toolResults = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));
const toolNames = (req: ModelRequest) => req.tools.map((t) => t.name).sort();
const leadHarness = (...[files, opts]: Parameters<typeof harness>) => harness(files, { defaultModel: "test:lead", ...opts });

/** The lead runs on test:lead (the harness default) and may use any test model, so may what it creates. */
const lead = (extra = "") =>
  workerFile(`
name: lead
compatible_models: ["test:*"]
toolsets:
  src: { use: files, root: /src }
  http: { use: http, allow: [api.github.com] }
  make: { use: worker_creation, grant: [src], max_workers: 2 }
approval:
  src_write_file: deny
${extra}`);

const readerDefinition = {
  name: "reader",
  description: "Reads source files",
  instructions: "Read what you are asked to.",
  toolsets: ["src"],
  model: "test:reader",
};

/** A lead that creates `reader` (with `create`'s arguments), then calls it, then answers with what it got. */
function leadModel(seen: ModelRequest[], create: Record<string, unknown> = readerDefinition) {
  return scriptedModel((req) => {
    seen.push(req);
    if (turnOf(req) === 0) return { toolCalls: [{ id: "c1", name: "make_worker_create", args: create }] };
    if (turnOf(req) === 1 && req.tools.some((t) => t.name === "reader"))
      return { toolCalls: [{ id: "r1", name: "reader", args: { input: "list the files" } }] };
    return { text: `lead: ${toolResults(req).join(" | ")}` };
  });
}

describe("worker_creation", () => {
  it("creates a worker granted src only; from the next turn it is a tool, and it sees src's tools but not http's", async () => {
    const seen: ModelRequest[] = [];
    const readerTools: string[][] = [];
    const reader = scriptedModel((req) => (readerTools.push(toolNames(req)), { text: "reader done" }));
    const h = leadHarness(
      { "lead.worker": lead("  make_worker_create: allow") },
      { kinds: [workerCreation], models: { "test:lead": leadModel(seen), "test:reader": reader } },
    );

    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "lead", input: { input: "go" } }, store);
    expect(out).toMatchObject({ status: "succeeded", output: expect.stringContaining("reader done") });
    // In the call tree (and so the run view) like any worker: under the tool call that ran it.
    expect(callTree(store.entries)!.tools.map((t) => [t.name, t.calls.map((c) => c.worker)])).toEqual([
      ["make_worker_create", []],
      ["reader", ["reader"]],
    ]);
    expect(toolNames(seen[0]!)).not.toContain("reader");
    expect(toolNames(seen[1]!)).toContain("reader");
    expect(seen[1]!.tools.find((t) => t.name === "reader")!.description).toBe("Reads source files");
    expect(readerTools).toEqual([["src_delete_file", "src_list_files", "src_read_file", "src_write_file"]]);
  });

  it("a created worker keeps its creator's policy whole: rules on the arguments and who decides", async () => {
    const file = workerFile(`
name: lead
compatible_models: ["test:*"]
toolsets:
  src: { use: files, root: /src }
  make: { use: worker_creation, grant: [src] }
approval:
  make_worker_create: allow
  src_write_file: { ask_when: { path: secret.txt }, otherwise: allow, ask: [lead@example.com] }`);
    const reader = scriptedModel((req) =>
      turnOf(req) === 0
        ? {
            toolCalls: [
              { id: "w1", name: "src_write_file", args: { path: "notes.txt", content: "fine" } },
              { id: "w2", name: "src_write_file", args: { path: "secret.txt", content: "x" } },
            ],
          }
        : { text: "written" },
    );
    const h = leadHarness({ "lead.worker": file }, { kinds: [workerCreation], models: { "test:lead": leadModel([]), "test:reader": reader } });
    const out = await h.run({ worker: "lead", input: { input: "go" } });
    expect(out).toMatchObject({
      status: "awaiting_approval",
      pending: [
        {
          workerChain: ["lead", "reader"],
          args: { path: "secret.txt", content: "x" },
          description: 'lead → reader wants to call src_write_file (ask_when path = "secret.txt")',
          deciders: { ask: ["lead@example.com"] },
        },
      ],
    });
  });

  it("a created worker keeps editable: false: its approver may not edit or answer in the call's place either (review 5)", async () => {
    const file = (policy: string) =>
      workerFile(`
name: lead
compatible_models: ["test:*"]
toolsets:
  src: { use: files, root: /src }
  make: { use: worker_creation, grant: [src] }
approval:
  make_worker_create: allow
  src_write_file: ${policy}`);
    const reader = () =>
      scriptedModel((req) =>
        turnOf(req) === 0 ? { toolCalls: [{ id: "w1", name: "src_write_file", args: { path: "secret.txt", content: "x" } }] } : { text: "written" },
      );
    for (const policy of [
      "{ editable: false }",
      "{ ask: [lead@example.com], editable: false }",
      "{ ask_when: { path: secret.txt }, otherwise: allow, editable: false }",
    ]) {
      const h = leadHarness({ "lead.worker": file(policy) }, { kinds: [workerCreation], models: { "test:lead": leadModel([]), "test:reader": reader() } });
      const out = await h.run({ worker: "lead", input: { input: "go" } });
      if (out.status !== "awaiting_approval") throw new Error(`${policy}: ${out.status}`);
      const [pending] = out.pending;
      expect(pending!.workerChain, policy).toEqual(["lead", "reader"]);
      expect(pending!.deciders?.editable, policy).toBe(false);
      // What an edit would be checked against: none, as for the creator's own calls.
      expect(pending!.inputSchema, policy).toBeUndefined();
    }
  });

  it("a created worker counts towards MAX_DEPTH like any worker", async () => {
    const seen: ModelRequest[] = [];
    const h = leadHarness(
      { "lead.worker": lead("  make_worker_create: allow") },
      { kinds: [workerCreation], maxDepth: 1, models: { "test:lead": leadModel(seen), "test:reader": scriptedModel([{ text: "x" }]) } },
    );
    const out = await h.run({ worker: "lead", input: { input: "go" } });
    expect(JSON.stringify(out)).toContain("call depth 2 exceeds MAX_DEPTH 1: lead → reader");
  });

  it("asks for approval by default: the run pauses before anything is created", async () => {
    const seen: ModelRequest[] = [];
    const h = leadHarness({ "lead.worker": lead() }, { kinds: [workerCreation], models: { "test:lead": leadModel(seen) } });
    const out = await h.run({ worker: "lead", input: { input: "go" } });
    expect(out.status).toBe("awaiting_approval");
    if (out.status !== "awaiting_approval") return;
    expect(out.pending).toMatchObject([{ tool: "make_worker_create", args: { name: "reader" } }]);
  });

  it("once approved, the resumed run creates the worker and calls it in the next turn", async () => {
    const seen: ModelRequest[] = [];
    const reader = scriptedModel([{ text: "reader done" }]);
    const h = leadHarness({ "lead.worker": lead() }, { kinds: [workerCreation], models: { "test:lead": leadModel(seen), "test:reader": reader } });
    const store = new MemoryJournalStore();
    const paused = await h.run({ worker: "lead", input: { input: "go" } }, store);
    if (paused.status !== "awaiting_approval") throw new Error(paused.status);
    expect([...store.entries.keys()].some((k) => k.endsWith("/worker-create"))).toBe(false);
    store.put(paused.pending[0]!.key, { approved: true, by: "test" });
    const done = await executeRun(h.config, store, { runId: "run-1", worker: "lead", input: { input: "go" } });
    expect(done).toMatchObject({ status: "succeeded", output: expect.stringContaining("reader done") });
    expect(reader.requests).toBe(1);
  });

  it("refuses a grant the instance does not give, and a definition a worker file could not have, as the tool's error", async () => {
    const seen: ModelRequest[] = [];
    const bad = { ...readerDefinition, toolsets: ["http"] };
    const h = leadHarness({ "lead.worker": lead("  make_worker_create: allow") }, { kinds: [workerCreation], models: { "test:lead": leadModel(seen, bad) } });
    const out = await h.run({ worker: "lead", input: { input: "go" } });
    expect(out.status).toBe("succeeded");
    expect(toolResults(seen.at(-1)!)[0]).toBe('Error: toolsets "http" are not granted by "make"; it grants: src');
    expect(toolNames(seen.at(-1)!)).not.toContain("reader");

    const badName: ModelRequest[] = [];
    const h2 = leadHarness(
      { "lead.worker": lead("  make_worker_create: allow") },
      { kinds: [workerCreation], models: { "test:lead": leadModel(badName, { ...readerDefinition, name: "no spaces", input: { type: "string" } }) } },
    );
    await h2.run({ worker: "lead", input: { input: "go" } });
    const error = toolResults(badName.at(-1)!)[0]!;
    expect(error).toContain('the worker definition was refused: worker "no spaces" created by lead.worker: name: must be 1-64 characters');
    expect(error).toContain("input: must be a JSON Schema with type: object");
  });

  it("refuses a schema with a regex (it could backtrack on every call's arguments)", async () => {
    const seen: ModelRequest[] = [];
    const evil = { ...readerDefinition, input: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } } };
    const h = leadHarness({ "lead.worker": lead("  make_worker_create: allow") }, { kinds: [workerCreation], models: { "test:lead": leadModel(seen, evil) } });
    await h.run({ worker: "lead", input: { input: "go" } });
    expect(toolResults(seen.at(-1)!)[0]).toContain("input: must not use pattern or patternProperties");
    expect(toolNames(seen.at(-1)!)).not.toContain("reader");

    // Nor disguised: zod builds a RegExp from an array `pattern` and from a boolean-valued `patternProperties` too.
    for (const input of [
      { type: "object", properties: { s: { type: "string", pattern: ["^(a+)+$"] } } },
      { type: "object", patternProperties: { "^(a+)+$": true } },
    ]) {
      const disguised: ModelRequest[] = [];
      const hd = leadHarness(
        { "lead.worker": lead("  make_worker_create: allow") },
        { kinds: [workerCreation], models: { "test:lead": leadModel(disguised, { ...readerDefinition, input }) } },
      );
      await hd.run({ worker: "lead", input: { input: "go" } });
      expect(toolResults(disguised.at(-1)!)[0]).toContain("input: must not use pattern or patternProperties");
    }

    // A property that is merely named `pattern` is fine.
    const named: ModelRequest[] = [];
    const fine = { ...readerDefinition, input: { type: "object", properties: { pattern: { type: "string" } } } };
    const h2 = leadHarness(
      { "lead.worker": lead("  make_worker_create: allow") },
      { kinds: [workerCreation], models: { "test:lead": leadModel(named, fine), "test:reader": scriptedModel([{ text: "ok" }]) } },
    );
    await h2.run({ worker: "lead", input: { input: "go" } });
    expect(toolResults(named[1]!)[0]).toContain('created worker "reader"');
  });

  it("refuses at creation, quickly and naming the worker and the bound, a schema whose anyOf/$refs blow up, recurse or point elsewhere", async () => {
    for (const [input, bound] of [
      [blowupSchema(24), "expands to more than 4000 JSON values with its $refs followed"],
      [
        { type: "object", properties: { t: { $ref: "#/$defs/t" } }, $defs: { t: { type: "object", properties: { c: { $ref: "#/$defs/t" } } } } },
        'has a recursive $ref ("#/$defs/t")',
      ],
      [{ type: "object", properties: { t: { $ref: "https://example.com/s.json" } } }, 'has $ref "https://example.com/s.json"; only local references'],
    ] as const) {
      const seen: ModelRequest[] = [];
      const h = leadHarness(
        { "lead.worker": lead("  make_worker_create: allow") },
        { kinds: [workerCreation], models: { "test:lead": leadModel(seen, { ...readerDefinition, input }) } },
      );
      const started = Date.now();
      await h.run({ worker: "lead", input: { input: "go" } });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(toolResults(seen.at(-1)!)[0]).toContain(`the input schema of worker "reader" ${bound}`);
      expect(toolNames(seen.at(-1)!)).not.toContain("reader");
    }
  });

  it("a created worker runs on its creator's model, never on another it picks", async () => {
    const seen: ModelRequest[] = [];
    const h = leadHarness(
      { "lead.worker": lead("  make_worker_create: allow") },
      { kinds: [workerCreation], models: { "test:lead": leadModel(seen, { ...readerDefinition, model: "openai:gpt-4.1" }) } },
    );
    await h.run({ worker: "lead", input: { input: "go" } });
    expect(toolResults(seen.at(-1)!)[0]).toContain('model "openai:gpt-4.1" is not one lead may use (its model is test:lead');
    expect(toolNames(seen.at(-1)!)).not.toContain("reader");
  });

  it("refuses a name the catalog uses, and more than max_workers", async () => {
    const seen: ModelRequest[] = [];
    const model = scriptedModel((req) => {
      seen.push(req);
      if (turnOf(req) > 0) return { text: "done" };
      const def = (name: string) => ({ ...readerDefinition, name });
      return { toolCalls: ["lead", "a", "b", "c"].map((n, i) => ({ id: `c${i}`, name: "make_worker_create", args: def(n) })) };
    });
    const h = leadHarness({ "lead.worker": lead("  make_worker_create: allow") }, { kinds: [workerCreation], models: { "test:lead": model } });
    await h.run({ worker: "lead", input: { input: "go" } });
    expect(toolResults(seen.at(-1)!)).toEqual([
      'Error: the name "lead" is taken by lead.worker; choose another',
      expect.stringContaining('created worker "a"'),
      expect.stringContaining('created worker "b"'),
      'Error: "make" has created its max_workers (2) for this run',
    ]);
    expect(toolNames(seen.at(-1)!)).toEqual(expect.arrayContaining(["a", "b"]));
  });

  it("refuses at catalog load a grant naming an instance the creator lacks", () => {
    const file = workerFile(`
name: lead
toolsets:
  src: { use: files, root: /src }
  make: { use: worker_creation, grant: [src, http] }`);
    expect(() => leadHarness({ "lead.worker": file }, { kinds: [workerCreation] })).toThrow(CatalogError);
    expect(() => leadHarness({ "lead.worker": file }, { kinds: [workerCreation] })).toThrow(
      /lead\.worker: toolsets\.make\.grant: "http" is not a toolset instance of lead/,
    );
    const selfGrant = file.replace("grant: [src, http]", "grant: [src, make]");
    expect(() => leadHarness({ "lead.worker": selfGrant }, { kinds: [workerCreation] })).toThrow(
      /toolsets\.make\.grant: "make" creates workers itself and cannot be granted/,
    );
  });

  it("a created worker is reachable through ctx.callWorker and ctx.callTool by name", async () => {
    const via = defineToolset({
      kind: "via",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        ask_reader: tool({
          description: "Calls reader by name",
          input: z.strictObject({}),
          readOnly: true,
          run: async (_a, ctx) => [await ctx.callWorker("reader", { input: "w" }), await ctx.callTool("reader", { input: "t" })],
        }),
      },
    });
    const file = workerFile(`
name: lead
compatible_models: ["test:*"]
toolsets:
  src: { use: files, root: /src }
  via: { use: via }
  make: { use: worker_creation, grant: [src] }
approval:
  make_worker_create: allow`);
    const seen: ModelRequest[] = [];
    const model = scriptedModel((req) => {
      seen.push(req);
      if (turnOf(req) === 0) return { toolCalls: [{ id: "c1", name: "make_worker_create", args: readerDefinition }] };
      if (turnOf(req) === 1) return { toolCalls: [{ id: "v1", name: "ask_reader", args: {} }] };
      return { text: toolResults(req).at(-1)! };
    });
    const reader = scriptedModel((req) => ({ text: `reader got ${req.messages.at(-1)!.content as string}` }));
    const h = leadHarness({ "lead.worker": file }, { kinds: [workerCreation, via], models: { "test:lead": model, "test:reader": reader } });
    const out = await h.run({ worker: "lead", input: { input: "go" } });
    expect(out).toMatchObject({ status: "succeeded", output: JSON.stringify(["reader got w", "reader got t"]) });
  });

  it("replay from every journal prefix repeats no creation, model request or tool call, and ends the same", async () => {
    const file = lead("  make_worker_create: allow");
    const setup = () => {
      const executed: string[] = [];
      const reader = scriptedModel((req) =>
        turnOf(req) === 0 ? { toolCalls: [{ id: "l1", name: "src_list_files", args: {} }] } : { text: `reader: ${toolResults(req).join(",")}` },
      );
      const h = leadHarness({ "lead.worker": file }, { kinds: [workerCreation], models: { "test:lead": leadModel([]), "test:reader": reader } });
      const run = (store: MemoryJournalStore) =>
        executeRun({ ...h.config, beforeStep: (key) => void executed.push(key) }, store, { runId: "replay", worker: "lead", input: { input: "go" } });
      return { executed, run };
    };
    const original = setup();
    const full = new MemoryJournalStore();
    const first = await original.run(full);
    expect(first.status).toBe("succeeded");
    const entries = [...full.entries];
    const keys = entries.map(([k]) => k);
    expect(keys.filter((k) => k.endsWith("/worker-create"))).toHaveLength(1);
    expect(keys.filter((k) => k.endsWith("/model"))).toHaveLength(5); // lead ×3, reader ×2
    expect(keys.filter((k) => k.endsWith("/result"))).toHaveLength(3); // create, reader, src_list_files

    for (let k = 0; k <= entries.length; k++) {
      const store = new MemoryJournalStore();
      for (const [key, value] of entries.slice(0, k)) store.put(key, value);
      const prefix = new Set(keys.slice(0, k));
      const replay = setup();
      expect(await replay.run(store), `prefix ${k}`).toEqual(first);
      // Every step that ran again is one the prefix did not hold, itself or inside a recorded call.
      const covered = (key: string) => prefix.has(key) || [...prefix].some((p) => p.endsWith("/result") && key.startsWith(p.slice(0, -"result".length)));
      expect(replay.executed.filter(covered), `steps repeated from prefix ${k}`).toEqual([]);
      expect([...store.entries.keys()].sort()).toEqual([...full.entries.keys()].sort());
    }
  });
});
