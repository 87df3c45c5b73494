import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { effectUrl, script, stub } from "./helpers";
import { consume, holdDispatches } from "./queue-dispatch";
import type { Usage } from "../../src/engine/types/usage";

afterEach(() => vi.restoreAllMocks());

const auth = { Authorization: "Bearer test-token" };
const get = (path: string) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));

/** The run's usage in all four places a person or a client reads it (`index: false` while it runs: see below). */
async function usageEverywhere(id: string, opts = { index: true }) {
  const api = ((await (await get(`/runs/${id}`)).json()) as { usage: Usage | null }).usage;
  const page = await (await get(`/runs/${id}/view`)).text();
  const summary = /<th>Usage<\/th>\s*<td>([^<]*)<\/td>/.exec(page)?.[1]?.trim();
  const tree = /<strong>dispatch-helper<\/strong> — (\d+) turns?, (\d+) tokens/.exec(page);
  // The index is told at lifecycle events and at the next alarm (never waited for by the run),
  // so while a run is in flight it may lag by one activation; once it ended, it agrees.
  let indexed: Usage | null | undefined;
  for (let i = 0; opts.index && i < 40 && !indexed?.requests; i++) {
    const { runs } = (await (await get(`/runs?worker=dispatch-helper`)).json()) as { runs: Array<{ id: string; usage: Usage | null }> };
    indexed = runs.find((r) => r.id === id)?.usage;
    if (!indexed?.requests) await new Promise((r) => setTimeout(r, 50));
  }
  return { api, summary, treeTokens: tree ? Number(tree[2]) : null, indexed };
}

describe("the run's usage, one number everywhere (MODEL_DISPATCH=queue)", () => {
  it("a run waiting for its second answer shows its first answer's 15 tokens in GET /runs/:id, the summary and the call tree; cancelled, in the index too", async () => {
    const held = holdDispatches();
    await script("dispatch-helper", [
      { tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("usage-1"), method: "POST", body: "x" } }] },
      { text: "helped" },
    ]);
    const id = "usage-in-flight";
    await stub(id).start({ id, worker: "dispatch-helper", input: { input: "go" }, approvalMode: "ask", budget: {} });
    await runDurableObjectAlarm(env.RUNS.getByName(id)); // hands turn 1 off
    await consume(held.splice(0)); // answered: 10 input + 5 output tokens (the fake server's default)
    await runDurableObjectAlarm(env.RUNS.getByName(id)); // runs the tool, hands turn 2 off
    expect(held).toHaveLength(1);
    expect((await stub(id).status())!.status).toBe("running");
    const expected = { requests: 1, inputTokens: 10, outputTokens: 5, costUsd: 0 };
    const shown = "1 model requests, 10 input + 5 output tokens, $0.000000";
    expect(await usageEverywhere(id, { index: false })).toEqual({ api: expected, summary: shown, treeTokens: 15, indexed: undefined });

    expect((await stub(id).cancel()).ok).toBe(true);
    expect(await usageEverywhere(id)).toEqual({ api: expected, summary: shown, treeTokens: 15, indexed: expected });
  });
});
