import { describe, expect, it } from "vitest";
import { waitEvents } from "../../src/engine/trace/wait-events";

const asked = { since: 1_000, until: 61_000, name: "ci_finished", correlation: "sha-1" };

describe("waitEvents", () => {
  it("a wait's end names how it ended; started carries what it waited for, its correlation key only with content", () => {
    const outcome = (end: unknown) => waitEvents("wait", end, asked, 0, false).at(-1)!.attributes;
    expect(outcome({ ended: "time", at: 5 })).toEqual({ "edgework.wait.kind": "sleep", "edgework.wait.outcome": "elapsed" });
    expect(outcome({ ended: "event", at: 5, id: "d", payload: null })).toEqual({ "edgework.wait.kind": "event", "edgework.wait.outcome": "delivered" });
    expect(outcome({ ended: "timeout", at: 5, after_ms: 60_000 })).toEqual({ "edgework.wait.kind": "event", "edgework.wait.outcome": "timed_out" });
    const [started, ended] = waitEvents("wait", { ended: "event", at: 9_000, id: "d", payload: null }, asked, 0, false);
    expect(started).toEqual({
      name: "edgework.wait.started",
      at: 1_000,
      attributes: { "edgework.wait.kind": "event", "edgework.wait.name": "ci_finished", "edgework.wait.until": new Date(61_000).toISOString() },
    });
    expect(ended!.at).toBe(9_000);
    expect(waitEvents("wait", { ended: "event", at: 9_000, id: "d", payload: null }, asked, 0, true)[0]!.attributes["edgework.wait.key"]).toBe("sha-1");
  });

  it("a question answered or not; its end at the host's time, else the span's", () => {
    const [, answered] = waitEvents("question", { approved: true, by: "x", answer: "42" }, { since: 1, until: 9, endedAt: 7 }, 3, false);
    expect(answered).toMatchObject({ at: 7, attributes: { "edgework.wait.kind": "question", "edgework.wait.outcome": "answered" } });
    expect(waitEvents("question", { approved: false, by: "expiry" }, undefined, 3, false)).toEqual([
      { name: "edgework.wait.ended", at: 3, attributes: { "edgework.wait.kind": "question", "edgework.wait.outcome": "expired" } },
    ]);
  });

  it("a wait until a time no Date holds (stored by an older version) is traced with the number, never a throw", () => {
    const [started] = waitEvents("wait", { ended: "time", at: 5 }, { ...asked, until: 1e20 }, 0, false);
    expect(started!.attributes["edgework.wait.until"]).toBe(1e20);
  });

  it("a step that is no wait's end (a grammar-1 step named like one) makes no event", () => {
    for (const end of [null, "text", { ended: "soon", at: 1 }, { ended: "time" }, { at: 1 }])
      expect(waitEvents("wait", end, asked, 0, false), JSON.stringify(end)).toEqual([]);
    expect(waitEvents("question", { answer: "42" }, asked, 0, false)).toEqual([]);
  });
});
