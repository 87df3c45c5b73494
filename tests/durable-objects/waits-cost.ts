import { expect } from "vitest";
import { settle, stub } from "./helpers";

/** Rows written and alarms set by one fn-waits-cost run, each sleep woken by the clock and each event wait by an event. */
async function waitsCost(id: string, sleeps: number, events: number): Promise<{ rows: number; alarms: number }> {
  const before = await stub(id).storageStats();
  await stub(id).start({ id, worker: "fn-waits-cost", input: { sleeps, events }, approvalMode: "ask", budget: {} });
  let view = await settle(id);
  for (let sent = 0; view.status === "waiting"; view = await settle(id)) {
    if (view.waits[0]!.kind === "sleep") await stub(id).advanceClock(60_000);
    else expect((await stub(id).deliverEvent({ name: "e", id: `${id}-${sent++}`, payload: null }, true)).ok).toBe(true);
  }
  expect(view.status).toBe("succeeded");
  const after = await stub(id).storageStats();
  return { rows: after.rowsWritten - before.rowsWritten, alarms: after.alarmsSet - before.alarmsSet };
}

/**
 * What waits cost a run, by difference between fn-waits-cost runs of 1 and 3 sleeps (or
 * event waits), each woken by the (test) clock or by an event: rows written and alarms set
 * per wait, and what the run's first wait adds (its tables). Used by the storage-cost test and `npm run bench`.
 */
export async function costOfWaits(prefix = "cost") {
  const none = await waitsCost(`${prefix}-w0`, 0, 0);
  const s1 = await waitsCost(`${prefix}-s1w`, 1, 0);
  const s3 = await waitsCost(`${prefix}-s3w`, 3, 0);
  const e1 = await waitsCost(`${prefix}-e1w`, 0, 1);
  const e3 = await waitsCost(`${prefix}-e3w`, 0, 3);
  return {
    perSleep: (s3.rows - s1.rows) / 2,
    perEvent: (e3.rows - e1.rows) / 2,
    firstSleep: s1.rows - none.rows,
    firstEvent: e1.rows - none.rows,
    alarmsPerSleep: (s3.alarms - s1.alarms) / 2,
    alarmsPerEvent: (e3.alarms - e1.alarms) / 2,
  };
}
