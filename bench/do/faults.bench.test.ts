import { expect, it } from "vitest";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "../../tests/durable-objects/helpers";
import { report } from "./report";

const EFFECTS = ["o1", "o2", "o3", "i1", "i2", "i3"];
const RUNS = 200;

async function loadScripts(tag: string) {
  const post = (name: string) => ({ url: effectUrl(`${tag}-${name}`), method: "POST", body: name });
  await script("evict-outer", [
    { tool_calls: [{ name: "evict-inner", arguments: { input: "inner work" } }, { name: "fx_fetch", arguments: post("o1") }] },
    { tool_calls: [{ name: "fx_fetch", arguments: post("o2") }, { name: "fx_fetch", arguments: post("o3") }] },
    { text: "outer done" },
  ]);
  await script("evict-inner", [
    { tool_calls: [{ name: "fx_fetch", arguments: post("i1") }, { name: "fx_fetch", arguments: post("i2") }] },
    { tool_calls: [{ name: "danger_fetch", arguments: post("i3") }] },
    { text: "inner done" },
  ]);
}

/** A small seeded PRNG (mulberry32), so a failing fault can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

it(`${RUNS} runs with a fault injected at a random step`, async () => {
  const seed = 20261122;
  const random = prng(seed);
  const tally = { runs: 0, completed: 0, faultsFired: 0, effectsExactlyOnce: 0, modelRequestsExactlyOnce: 0, byMode: { throw: 0, abort: 0 } as Record<string, number> };
  for (let r = 0; r < RUNS; r++) {
    const tag = `fault-${r}`;
    const mode = random() < 0.5 ? "throw" : "abort";
    const atJournalSize = Math.floor(random() * 16);
    await loadScripts(tag);
    await stub(tag).start({ id: tag, worker: "evict-outer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await stub(tag).setTestHooks({ fault: { atJournalSize, mode } });
    const count = { activations: 0, failed: 0 };
    let view = await settle(tag, { count });
    while (view.status === "awaiting_approval") {
      await stub(tag).decide(view.approvals.find((a) => a.status === "pending")!.id, { decision: "approve", by: "bench" });
      view = await settle(tag, { count });
    }
    tally.runs++;
    tally.byMode[mode]!++;
    tally.faultsFired += count.failed;
    if (view.status === "succeeded" && view.output === "outer done") tally.completed++;
    const effects = await Promise.all(EFFECTS.map((e) => effectCount(`${tag}-${e}`)));
    if (effects.every((n) => n === 1)) tally.effectsExactlyOnce++;
    if ((await modelRequests("evict-outer")).length === 3 && (await modelRequests("evict-inner")).length === 3) tally.modelRequestsExactlyOnce++;
  }
  report("faults", { seed, ...tally });
  expect(tally).toMatchObject({ completed: RUNS, effectsExactlyOnce: RUNS, modelRequestsExactlyOnce: RUNS, faultsFired: RUNS });
}, 300_000);
