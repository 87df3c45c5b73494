import { describe, expect, it } from "vitest";
import { effectUrl, script, settle, stub } from "./helpers";
import { costOfWaits } from "./waits-cost";

const get = (i: number) => ({ id: `g${i}`, name: "web_fetch", arguments: { url: effectUrl(`cost-${i}`) } });

/** Rows written (SQL cursors' rowsWritten) by one run, from start to its end, approvals decided. */
async function rowsWritten(id: string, worker: "cost" | "cost-ask", replies: unknown[]): Promise<number> {
  await script(worker, replies);
  const before = await stub(id).storageStats(); // constructs the object: schema setup is not counted
  await stub(id).start({ id, worker, input: { input: "x" }, approvalMode: "ask", budget: {} });
  let view = await settle(id);
  while (view.status === "awaiting_approval") {
    for (const a of view.approvals.filter((a) => a.status === "pending")) await stub(id).decide(a.id, { decision: "approve", by: "test" });
    view = await settle(id);
  }
  expect(view.status).toBe("succeeded");
  return (await stub(id).storageStats()).rowsWritten - before.rowsWritten;
}

describe("Durable Object storage cost", () => {
  it("rows written per model turn, per tool call and per approval", async () => {
    // One turn with k parallel tool calls, then a final turn: base + 2·turn + k·tool.
    const oneTurn = (k: number) => [{ tool_calls: Array.from({ length: k }, (_, i) => get(i)) }, { text: "done" }];
    // n turns of one tool call each, then a final turn: base + (n+1)·turn + n·tool.
    const turns = (n: number) => [...Array.from({ length: n }, (_, i) => ({ tool_calls: [get(i)] })), { text: "done" }];

    const p1 = await rowsWritten("cost-p1", "cost", oneTurn(1));
    const p4 = await rowsWritten("cost-p4", "cost", oneTurn(4));
    const s1 = await rowsWritten("cost-s1", "cost", turns(1));
    const s5 = await rowsWritten("cost-s5", "cost", turns(5));
    const ask = await rowsWritten("cost-ask", "cost-ask", oneTurn(1));

    const perTool = (p4 - p1) / 3;
    const perTurn = (s5 - s1 - 4 * perTool) / 4;
    const base = p1 - 2 * perTurn - perTool;
    const perApproval = ask - p1;
    console.log(
      `rows written: per model turn ${perTurn}, per tool call ${perTool}, per approval (suspend + decide + resume) ${perApproval}, fixed per run ${base}`,
    );
    expect(perTurn).toBeLessThanOrEqual(2);
    expect(perTool).toBeLessThanOrEqual(2);
    expect(perApproval).toBeLessThanOrEqual(5);
    expect(base).toBeLessThanOrEqual(4);
  });
});

describe("Durable Object storage cost of waits", () => {
  it("rows written per sleep and per event wait (suspend, wake, resume)", async () => {
    const { perSleep, perEvent, firstSleep, firstEvent, alarmsPerSleep, alarmsPerEvent } = await costOfWaits();
    console.log(
      `rows written: per sleep ${perSleep} (the run's first ${firstSleep}: its waits table), per event wait woken by an event ${perEvent} (the first ${firstEvent}: waits and inbox tables); ` +
        `alarms set per sleep ${alarmsPerSleep}, per event wait ${alarmsPerEvent}`,
    );
    // A sleep: its waits row, the run_waiting event, its end (a journal step); nothing else.
    expect(perSleep).toBeLessThanOrEqual(3);
    // An event wait: the same, plus the event's inbox row (its id, for idempotency).
    expect(perEvent).toBeLessThanOrEqual(4);
  });
});
