import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SIGNAL_MEMORY_MS } from "../../durable-objects/wait-index";
import type { WaitIndexRpc } from "../../src/runs/rpc";

const index = (name: string) => env.WAIT_INDEX.getByName(name) as unknown as WaitIndexRpc;
const signal = (n: number) => ({ name: "ci_finished", id: `gh-${n}`, key: "sha", payload: { n } });

describe("the wait index keeps recent signals for waits it did not know yet", () => {
  it("a registration gets the signals that came since its wait was asked; none without `since`; a signal lists no run of its own", async () => {
    const ix = index("wi-since");
    const before = Date.now();
    expect(await ix.waiting(before, 10, signal(1))).toEqual([]);
    expect(await ix.register("run-a", "wt_1", before + 60_000, before)).toEqual([signal(1)]);
    expect(await ix.register("run-b", "wt_1", before + 60_000, before + 1)).toEqual([]);
    expect(await ix.register("run-c", "wt_1", before + 60_000)).toEqual([]);
    expect((await ix.waiting(Date.now(), 10)).sort()).toEqual(["run-a", "run-b", "run-c"]);
  });

  it("hostile: a flood of signals keeps only the newest 20, and none past its memory", async () => {
    const ix = index("wi-flood");
    const start = Date.now();
    for (let n = 1; n <= 30; n++) await ix.waiting(start + n, 10, signal(n));
    const kept = await ix.register("run-a", "wt_1", start + 60_000, 0);
    expect(kept.map((s) => s.id)).toEqual(Array.from({ length: 20 }, (_, i) => `gh-${i + 11}`));
    // Much later, the next signal drops every kept one past the memory.
    await ix.waiting(start + SIGNAL_MEMORY_MS + 1_000, 10, signal(31));
    expect((await ix.register("run-a", "wt_1", start + 60_000, 0)).map((s) => s.id)).toEqual(["gh-31"]);
    const rows = await runInDurableObject(env.WAIT_INDEX.getByName("wi-flood"), (_o, state) => [...state.storage.kv.list()].length);
    expect(rows).toBe(2); // the signal and run-a's registration
  });
});
