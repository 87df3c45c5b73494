import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { flowObjectName } from "../../src/triggers/flow/key";
import { script, settle, stub } from "../../tests/durable-objects/helpers";
import { deliver, issueBody, keyOf, runOf } from "../../tests/flow/support";
import { report } from "./report";

type Stats = { rowsRead: number; rowsWritten: number; alarmsSet: number };
const diff = (a: Stats, b: Stats) => ({ rowsRead: b.rowsRead - a.rowsRead, rowsWritten: b.rowsWritten - a.rowsWritten, alarmsSet: b.alarmsSet - a.alarmsSet });

/** The rows a run's object wrote and read during `step`. */
async function runCost(id: string, step: () => Promise<unknown>) {
  const before = await stub(id).storageStats();
  await step();
  return diff(before, await stub(id).storageStats());
}

it("flow control: rows and alarms per delivery in each mode", async () => {
  const body = (trigger: string, issue: number, seq: number) => issueBody(issue, seq, `t${seq}`, `bench/${trigger}`);
  const send = (trigger: string, issue: number, seq: number) => deliver(trigger, body(trigger, issue, seq), null);
  const keyOfBench = (trigger: string, issue: number) => keyOf(trigger, issue, `bench/${trigger}`);
  const m = (trigger: string, issue: number, step: () => Promise<unknown>) =>
    (async () => {
      const key = await keyOfBench(trigger, issue);
      const before = await key.storageStats();
      await step();
      return diff(before, await key.storageStats());
    })();

  // The first delivery of a key makes its object (its tables); a later one to a free key is the steady cost.
  const first = await m("flow-queue", 1, () => send("flow-queue", 1, 1));
  const run1 = await runOf("flow-queue", body("flow-queue", 1, 1));
  const queued = await m("flow-queue", 1, () => send("flow-queue", 1, 2));
  const run2 = await runOf("flow-queue", body("flow-queue", 1, 2));
  // A run ends: its slot frees and the queued delivery starts (what runEnded costs the key).
  const endAndNext = await m("flow-queue", 1, async () => (await keyOfBench("flow-queue", 1)).runEnded(run1));
  expect((await stub(run2).status())?.status).toBe("queued");
  await (await keyOfBench("flow-queue", 1)).runEnded(run2);
  const startFree = await m("flow-queue", 1, () => send("flow-queue", 1, 3));
  const redelivery = await m("flow-queue", 1, () => send("flow-queue", 1, 3));

  await send("flow-skip", 1, 1);
  const skip = await m("flow-skip", 1, () => send("flow-skip", 1, 2));

  await send("flow-replace", 1, 1);
  const replace = await m("flow-replace", 1, () => send("flow-replace", 1, 2));

  await send("flow-message", 1, 1);
  const chat = await runOf("flow-message", body("flow-message", 1, 1));
  let message: Stats = { rowsRead: 0, rowsWritten: 0, alarmsSet: 0 };
  const messageRun = await runCost(chat, async () => {
    message = await m("flow-message", 1, () => send("flow-message", 1, 2));
  });

  await send("flow-debounce", 1, 1);
  const debounced = await m("flow-debounce", 1, () => send("flow-debounce", 1, 2));
  const key = await keyOfBench("flow-debounce", 1);
  await key.advanceClock(10_000);
  const flush = await m("flow-debounce", 1, async () =>
    runDurableObjectAlarm(env.FLOW_KEYS.getByName(await flowObjectName("flow-debounce", ["bench/flow-debounce", 1]))),
  );

  await send("flow-rate", 1, 1);
  await send("flow-rate", 1, 2);
  const refused = await m("flow-rate", 1, async () => expect((await send("flow-rate", 1, 3)).status).toBe(429));

  report("flow", {
    note: "SQL rows of the key's object per delivery (KV: +1 row for the key's first delivery, +1 per delivery let through on a key with a rate); requests: hook → key 1 RPC, key → run 1 (start, message, event) or 2 (replace: cancel, start), 0 (skip, queued, debounced, refused)",
    firstDeliveryOfAKey: first,
    startOnAFreeKey: startFree,
    queuedWhileBusy: queued,
    runEndedStartsTheNext: endAndNext,
    skippedWhileBusy: skip,
    replaceWhileBusy: replace,
    messageWhileBusy: message,
    messageWhileBusyRunObject: messageRun,
    debouncedDelivery: debounced,
    debounceFlushAndStart: flush,
    redeliveryOfAnActedDelivery: redelivery,
    refusedOverTheRate: refused,
  });
});

it("completion webhooks: what a notification costs the run", async () => {
  const cost = async (id: string, notify?: { url: { url: string; on: Array<"ended" | "paused"> } }) => {
    await script("flow-echo", [{ text: "done" }]);
    return runCost(id, async () => {
      await stub(id).start({ id, worker: "flow-echo", input: { title: "t" }, approvalMode: "ask", budget: {}, ...(notify ? { notify } : {}) });
      await settle(id);
    });
  };
  const without = await cost("bench-notify-none");
  const withHook = await cost("bench-notify-one", { url: { url: `${env.NOTIFY_RECEIVER_URL}/hook/bench`, on: ["ended"] } });
  report("notify", {
    note: "rows the run's object writes for one completion webhook of its end, delivered at the first attempt (SQL; +1 KV row: the run's listeners, at its start)",
    rowsWrittenPerNotification: withHook.rowsWritten - without.rowsWritten,
    rowsReadPerNotification: withHook.rowsRead - without.rowsRead,
    alarmsSet: withHook.alarmsSet - without.alarmsSet,
  });
});
