import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineFunction, executeRun, MemoryJournalStore } from "../../src/engine";
import type { Schedules } from "../../src/engine/types/schedule";
import { MAX_SCHEDULES_PER_RUN } from "../../src/engine/run/schedule-step";
import { harness } from "./helpers";

/** A schedules port that counts its calls, and answers as a store would (the same id twice: the same schedule). */
function countingSchedules(fail = false) {
  const made = new Map<string, unknown>();
  const calls: string[] = [];
  const port: Schedules = {
    async create(id, spec) {
      calls.push(id);
      if (fail) throw new Error("no answer");
      if ((spec as { every?: string }).every === "never") return { ok: false, error: "every: never is not a duration" };
      made.set(id, spec);
      return { ok: true, id, next_fire_at: 1 };
    },
  };
  return { port, made, calls };
}

const scheduler = defineFunction({
  name: "scheduler",
  description: "Creates the schedules it is given, catching refusals",
  input: z.strictObject({ specs: z.array(z.unknown()) }),
  async run({ specs }, ctx) {
    const out: unknown[] = [];
    for (const s of specs) out.push(await ctx.schedule(s as Parameters<typeof ctx.schedule>[0]).catch((e: Error) => e.message));
    return out;
  },
});

describe("ctx.schedule", () => {
  it("creates once per call: a replay of the journal asks the store nothing, and ids differ per call and per run", async () => {
    const h = harness({}, { functions: [scheduler] });
    const { port, calls } = countingSchedules();
    h.config.schedules = port;
    const store = new MemoryJournalStore();
    const input = {
      specs: [
        { worker: "scheduler", every: "1h" },
        { worker: "scheduler", every: "2h" },
      ],
    };
    const first = await h.run({ worker: "scheduler", input }, store);
    expect(first.status).toBe("succeeded");
    expect(calls).toHaveLength(2);
    expect(new Set(calls).size).toBe(2);
    const again = await executeRun(h.config, store, { runId: "run-1", worker: "scheduler", input });
    expect(again).toMatchObject({ status: "succeeded" });
    expect(calls).toHaveLength(2);
    const other = await h.run({ worker: "scheduler", input });
    expect(other.status).toBe("succeeded");
    expect(calls.slice(2).some((id) => calls.slice(0, 2).includes(id))).toBe(false);
  });

  it("a refusal is recorded (a replay refuses again without asking); past the bound per run it is refused without asking", async () => {
    const h = harness({}, { functions: [scheduler] });
    const { port, calls } = countingSchedules();
    h.config.schedules = port;
    const store = new MemoryJournalStore();
    const specs = [
      { worker: "scheduler", every: "never" },
      ...Array.from({ length: MAX_SCHEDULES_PER_RUN + 1 }, (_, i) => ({ worker: "scheduler", every: `${i + 1}h` })),
    ];
    const outcome = await h.run({ worker: "scheduler", input: { specs } }, store);
    const out = (outcome as { output: unknown[] }).output;
    expect(out[0]).toBe("ctx.schedule: every: never is not a duration");
    expect(out.at(-1)).toBe(`ctx.schedule: this run created ${MAX_SCHEDULES_PER_RUN} schedules, the most a run may (${MAX_SCHEDULES_PER_RUN})`);
    expect(calls).toHaveLength(MAX_SCHEDULES_PER_RUN + 1);
  });

  it("a replay that asks for another spec at a recorded call fails nondeterministic; a store that does not answer interrupts the run", async () => {
    const h = harness({}, { functions: [scheduler] });
    const { port } = countingSchedules();
    h.config.schedules = port;
    const store = new MemoryJournalStore();
    await h.run({ worker: "scheduler", input: { specs: [{ worker: "scheduler", every: "1h" }] } }, store);
    const drifted = await executeRun(h.config, store, { runId: "run-1", worker: "scheduler", input: { specs: [{ worker: "scheduler", every: "3h" }] } });
    expect(drifted).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });

    const down = harness({}, { functions: [scheduler] });
    down.config.schedules = countingSchedules(true).port;
    await expect(down.run({ worker: "scheduler", input: { specs: [{ worker: "scheduler", every: "1h" }] } })).rejects.toMatchObject({
      name: "RunInterrupted",
      reason: "retry",
      message: expect.stringContaining("ctx.schedule: no answer from the schedules' store: no answer"),
    });
  });
});
