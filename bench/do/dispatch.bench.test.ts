import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { effectUrl, modelRequests, script, stub } from "../../tests/durable-objects/helpers";
import { consume, holdDispatches } from "../../tests/durable-objects/queue-dispatch";
import { report } from "./report";

/** vitest.bench.config.ts runs this file in both dispatch modes (MODEL_DISPATCH=direct, then =queue). */
const mode = (env.MODEL_DISPATCH as string) === "queue" ? "queue" : "direct";
const MODEL_REQUESTS = 10;

/**
 * What one run of 10 model requests (9 that call a tool, then the answer) costs its
 * object in this mode, with a zero-latency model: requests to the object (start,
 * each alarm, and in queue mode each claim and delivery), rows, and the object's
 * active time. In queue mode every hand-off goes through the app's real consumer
 * (the queue itself is stood in for by the test, as in the fault benchmark); the
 * consumer's whole wall time counts as object time too (its claim and delivery
 * RPCs are inside it, and so is the model's loopback request: an upper bound).
 */
it(`cost of a run of ${MODEL_REQUESTS} model requests, MODEL_DISPATCH=${mode}`, async () => {
  const id = `dispatch-cost-${mode}`;
  const replies: unknown[] = Array.from({ length: MODEL_REQUESTS - 1 }, (_, t) => ({
    tool_calls: [{ id: `c${t}`, name: "web_fetch", arguments: { url: effectUrl(`${id}-${t}`) } }],
  }));
  await script("bench-resume", [...replies, { text: "done" }]);
  const held = mode === "queue" ? holdDispatches() : [];
  const measured = { requests: 0, activeMs: 0, messages: 0, consumerInvocations: 0, consumerMs: 0, alarms: 0 };
  const timed = async <T>(fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      measured.activeMs += performance.now() - t0;
    }
  };

  await timed(() => stub(id).start({ id, worker: "bench-resume", input: { input: "go" }, approvalMode: "ask", budget: {} }));
  measured.requests++;
  for (let i = 0; i < 4 * MODEL_REQUESTS && (await stub(id).status())!.status !== "succeeded"; i++) {
    if (await timed(() => runDurableObjectAlarm(env.RUNS.getByName(id)))) measured.requests++, measured.alarms++;
    if (!held.length) continue;
    const batch = held.splice(0);
    const t0 = performance.now();
    await timed(() => consume(batch));
    measured.consumerMs += performance.now() - t0;
    measured.messages += batch.length;
    measured.consumerInvocations++;
    measured.requests += 2 * batch.length; // each message: its claim and its delivery
  }
  const view = (await stub(id).status())!;
  expect(view.status).toBe("succeeded");
  expect(await modelRequests("bench-resume")).toHaveLength(MODEL_REQUESTS);
  const stats = await stub(id).storageStats();
  report(`dispatch_${mode}`, {
    mode,
    modelRequests: MODEL_REQUESTS,
    ...measured,
    rowsWritten: stats.rowsWritten,
    rowsRead: stats.rowsRead,
    alarmsSet: stats.alarmsSet,
  });
}, 120_000);
