import { describe, expect, it } from "vitest";
import { z } from "zod";
import { contextWith } from "../../src/engine/run/context-with";
import { defineToolset, MemoryJournalStore, scriptedModel, tool, type ToolContext } from "../../src/engine";
import { harness, workerFile } from "./helpers";

/** A tool that reaches its context's effect methods every way a tool may: destructured, on copies made before and after, with members replaced. */
function probeKind(seen: Record<string, unknown>) {
  return defineToolset({
    kind: "probe",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      probe: tool({
        description: "Uses its context",
        readOnly: true,
        input: z.strictObject({}),
        run: async (_args, ctx: ToolContext) => {
          const before = contextWith(ctx, { state: ctx.state });
          const { now, step } = ctx; // unbound
          const after = contextWith(ctx, {});
          const custom = contextWith(ctx, { step: async () => "replaced" as never });
          seen.times = [await now(), await before.now(), await after.now()];
          seen.id = await before.randomId();
          seen.stepped = await step("s", () => "ran");
          seen.custom = await custom.step("s2", () => "ran");
          seen.keys = [ctx.idempotencyKey, before.idempotencyKey, after.idempotencyKey];
          return "ok";
        },
      }),
    },
  });
}

describe("tool context", () => {
  it("its methods work unbound, and a copy shares its effect counter and keys whenever it was made", async () => {
    const seen: Record<string, unknown> = {};
    const model = scriptedModel((_req, n) => (n === 0 ? { toolCalls: [{ id: "c1", name: "p_probe", arguments: "{}" }] } : { text: "done" }));
    const h = harness(
      { "a.worker": workerFile("name: a\nmodel: test:m\ntoolsets:\n  p: { use: probe }") },
      { kinds: [probeKind(seen)], models: { "test:m": model } },
    );
    const store = new MemoryJournalStore();
    expect((await h.run({ worker: "a", input: { input: "go" } }, store)).status).toBe("succeeded");
    const effects = [...store.entries.keys()].filter((k) => /\/(now|random|step):[^/]+$/.test(k)).map((k) => k.slice(k.lastIndexOf("/") + 1));
    expect(effects).toEqual(["now:1", "now:2", "now:3", "random:4", "step:s"]);
    expect(seen.stepped).toBe("ran");
    expect(seen.custom).toBe("replaced");
    const keys = seen.keys as string[];
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBeTruthy();
  });
});
