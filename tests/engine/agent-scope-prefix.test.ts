import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, tool, type Model, type ModelRequest, type ModelResponse } from "../../src/engine";
import { harness, workerFile } from "./helpers";

/**
 * Review: a call frame clears its call-scoped state when it ends with
 * `clear("call", scopeId, { prefix: true })`, a raw string prefix. An `llmAgent` frame's
 * path ends in a counter (`<call>/agent:1`), so the end of agent:1 also deletes the
 * state of agent:10 … agent:19 of the same call while they run (their call-scoped
 * files, their `~context`). Fan-out to sub-agents in parallel is what llmAgent is for.
 */
describe("review: call-scoped state of parallel llmAgent frames", () => {
  it("agent:1 ending does not delete the files of agent:10, which is still running", async () => {
    let first: Promise<unknown> | undefined;
    let answers: unknown[] = [];
    let tenWrote!: () => void;
    const wrote = new Promise<void>((r) => (tenWrote = r));
    const fanout = defineToolset({
      kind: "fanout",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        fanout: tool({
          description: "Eleven sub-agents at once",
          input: z.strictObject({}),
          readOnly: true,
          async run(_args, ctx) {
            const agents = Array.from({ length: 11 }, (_, i) =>
              ctx.llmAgent({ instructions: `agent ${i + 1}`, input: "go", model: "test:agents", toolsets: { files: { use: "files" } } }),
            );
            first = agents[0];
            answers = await Promise.all(agents);
            return "fanned out";
          },
        }),
      },
    });
    const text = (s: string): ModelResponse => ({ text: s, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } });
    const call = (name: string, args: unknown): ModelResponse => ({
      text: null,
      toolCalls: [{ id: name, name, arguments: JSON.stringify(args) }],
      usage: { inputTokens: 1, outputTokens: 1 },
    });
    const agents: Model = {
      async request(req: ModelRequest) {
        const who = req.messages[0]!.content as string;
        const results = req.messages.filter((m) => m.role === "tool");
        if (who === "agent 1") await wrote; // ends only once agent:10 has written its file
        if (who !== "agent 10") return text(`${who} done`);
        if (results.length === 0) return call("write_file", { path: "note.txt", content: "ten's note" });
        if (results.length === 1) {
          tenWrote();
          await first; // agent:1 has ended (its frame closed)
          return call("read_file", { path: "note.txt" });
        }
        return text(JSON.stringify(results[1]!.content));
      },
    };
    const lead: Model = {
      async request(req) {
        return req.messages.some((m) => m.role === "tool") ? text("lead done") : call("fanout", {});
      },
    };
    const h = harness(
      { "lead.worker": workerFile(`\nname: lead\nmodel: test:lead\ntoolsets:\n  fanout: { use: fanout }`) },
      { kinds: [fanout], models: { "test:lead": lead, "test:agents": agents } },
    );
    const out = await h.run({ worker: "lead", input: { input: "x" }, approvalMode: "approve_all" });
    expect(out).toMatchObject({ status: "succeeded" });
    // agent:10 reads back the file it wrote, after agent:1 ended.
    expect(answers[9]).toContain("ten's note");
    expect(answers[9]).not.toContain("no file at /note.txt");
  });
});
