import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { captureMail } from "../email/support";
import { effectCount, effectUrl, modelRequests, script, settle, stub } from "./helpers";

beforeEach(() => void captureMail());
afterEach(() => vi.restoreAllMocks());

const RULE = 'ask_when method in ["POST","PUT","PATCH","DELETE"]';

describe("approval rules on the arguments, in a run's object", () => {
  it("GET runs without asking, POST asks naming its rule; remembered, the same POST runs; another POST asks again", async () => {
    const id = "rules-run";
    const post = { url: effectUrl("rules-post"), method: "POST", body: "same" };
    await script("rules-writer", [
      {
        tool_calls: [
          { name: "fx_fetch", arguments: { url: effectUrl("rules-get") } },
          { name: "fx_fetch", arguments: post },
        ],
      },
      { tool_calls: [{ name: "fx_fetch", arguments: post }] },
      { tool_calls: [{ name: "fx_fetch", arguments: { ...post, body: "other" } }] },
      { text: "done" },
    ]);
    await stub(id).start({ id, worker: "rules-writer", input: { input: "x" }, approvalMode: "ask", budget: {} });
    const paused = await settle(id);
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.approvals).toEqual([expect.objectContaining({ status: "pending", description: `rules-writer wants to call fx_fetch (${RULE})` })]);
    expect(await effectCount("rules-post")).toBe(0);

    expect(await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "ops", remember: true })).toMatchObject({ ok: true });
    const again = await settle(id);
    // The GET ran at once (its answer is in the model's second request); the identical POST went through remembered.
    const second = JSON.stringify((await modelRequests("rules-writer"))[1]);
    expect(second).toContain('\\"status\\":200');
    expect(await effectCount("rules-post")).toBe(2);
    expect(again.status).toBe("awaiting_approval");
    expect(again.approvals.map((a) => a.status)).toEqual(["approved", "pending"]);

    expect(await stub(id).decide(again.approvals[1]!.id, { decision: "reject", by: "ops" })).toMatchObject({ ok: true });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "done" });
    expect(await effectCount("rules-post")).toBe(2);
  });
});
