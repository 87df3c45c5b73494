import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { effectUrl, script, stub } from "../../tests/durable-objects/helpers";
import { report } from "./report";

const get = (i: number) => ({ id: `g${i}`, name: "web_fetch", arguments: { url: effectUrl(`bench-${i}`) } });
const stats = (id: string) => stub(id).storageStats();
const alarmOf = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());

/** A run of `turns` turns of `perTurn` GETs, then (optionally) one call that asks, then a final answer. */
async function scripted(model: string, turns: number, perTurn: number, ask: boolean) {
  const replies: unknown[] = [];
  for (let t = 0; t < turns; t++) replies.push({ tool_calls: Array.from({ length: perTurn }, (_, i) => ({ ...get(t * perTurn + i), id: `t${t}_${i}` })) });
  if (ask) replies.push({ tool_calls: [{ id: "gate", name: "gate_fetch", arguments: { url: effectUrl("gate"), method: "POST" } }] });
  replies.push({ text: "done" });
  await script(model, replies);
}

/** Moves the pending approvals' expiry into the past (outside the run's own counters), as if their time had come. */
const expireApprovals = (id: string) =>
  runInDurableObject(
    env.RUNS.getByName(id),
    (_o, state) => void state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE status = 'pending'", Date.now() - 1),
  );

/**
 * Drives one run through its activations, counting only what the run itself costs
 * (start, every alarm, the decision) — not the status reads a watcher makes.
 * `approval`: someone approves at once, or nobody does and the approval expires.
 */
async function drive(id: string, approval: "approve" | "expire" = "approve") {
  const cost = { rowsRead: 0, rowsWritten: 0, requests: 0, activations: 0, alarmsSet: 0, alarmsSetPerPause: 0 };
  const measured = async <T>(fn: () => Promise<T>): Promise<T> => {
    const s0 = await stats(id);
    const out = await fn();
    const s1 = await stats(id);
    cost.rowsRead += s1.rowsRead - s0.rowsRead;
    cost.rowsWritten += s1.rowsWritten - s0.rowsWritten;
    cost.alarmsSet += s1.alarmsSet - s0.alarmsSet;
    cost.requests++;
    return out;
  };
  const activate = async () => {
    const alarms = cost.alarmsSet;
    const ran = await measured(() => runDurableObjectAlarm(env.RUNS.getByName(id)));
    if (ran) cost.activations++;
    if ((await stub(id).status())!.status === "awaiting_approval") cost.alarmsSetPerPause = cost.alarmsSet - alarms;
    return ran;
  };
  await measured(() => stub(id).start({ id, worker: "bench-resume", input: { input: "go" }, approvalMode: "ask", budget: {} }));
  let view = (await stub(id).status())!;
  let resume = { rowsRead: 0, rowsWritten: 0, ms: 0 };
  let pausedHoldsAlarm: boolean | null = null;
  for (let i = 0; i < 20 && view.status !== "succeeded"; i++) {
    if (view.status === "awaiting_approval") {
      pausedHoldsAlarm = (await alarmOf(id)) !== null;
      if (approval === "approve") await measured(() => stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "bench" }));
      else await expireApprovals(id);
      const before = { ...cost };
      const t0 = Date.now();
      await activate();
      resume = { rowsRead: cost.rowsRead - before.rowsRead, rowsWritten: cost.rowsWritten - before.rowsWritten, ms: Date.now() - t0 };
    } else {
      await activate();
    }
    view = (await stub(id).status())!;
  }
  expect(view.status).toBe("succeeded");
  return { ...cost, pausedHoldsAlarm, resume };
}

it("storage and request cost of a run", async () => {
  // Differences between runs isolate the cost of one turn, one tool call, one approval.
  await scripted("bench-resume", 1, 1, false);
  const p1 = await drive("cost-p1");
  await scripted("bench-resume", 1, 4, false);
  const p4 = await drive("cost-p4");
  await scripted("bench-resume", 5, 1, false);
  const s5 = await drive("cost-s5");
  await scripted("bench-resume", 1, 1, true);
  const ask = await drive("cost-ask");
  await scripted("bench-resume", 1, 1, true);
  const expired = await drive("cost-expired", "expire");
  await scripted("bench-resume", 10, 1, true);
  const ten = await drive("cost-ten");

  const perTool = (p4.rowsWritten - p1.rowsWritten) / 3;
  const perTurn = (s5.rowsWritten - p1.rowsWritten - 4 * perTool) / 4;
  report("storage", {
    rowsWrittenPerTurn: perTurn,
    rowsWrittenPerTool: perTool,
    // A one-tool run is two turns and one tool call; the rest is what every run writes.
    rowsWrittenFixedPerRun: p1.rowsWritten - 2 * perTurn - perTool,
    rowsWrittenPerApproval: ask.rowsWritten - p1.rowsWritten - perTurn - perTool,
    rowsWrittenPerExpiredApproval: expired.rowsWritten - p1.rowsWritten - perTurn - perTool,
    rowsReadPerResume: ask.resume.rowsRead,
    alarmsPerApproval: ask.alarmsSet - p1.alarmsSet,
    alarmsPerExpiredApproval: expired.alarmsSet - p1.alarmsSet,
    alarmsSetPerPause: ask.alarmsSetPerPause,
    tenTurnRunWithApproval: ten,
  });
});

it("resume cost against run length", async () => {
  const rows = [];
  for (const [steps, turns, perTurn] of [
    [10, 2, 4],
    [100, 20, 4],
    [500, 100, 4],
  ] as const) {
    await scripted("bench-resume", turns, perTurn, true);
    const r = await drive(`resume-${steps}`);
    rows.push({ steps: turns * (perTurn + 1), ...r.resume });
  }
  report("resume", rows);
});
