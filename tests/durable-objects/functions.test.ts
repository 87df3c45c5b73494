import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_OUTPUT_DEPTH } from "../../src/engine/journal/bounds";
import { effectCount, effectUrl, script, settle, stub } from "./helpers";
import { approvalWithFallback, askWithFallback } from "./signals";

const auth = { Authorization: "Bearer test-token" };
const post = (path: string, body: unknown, headers: Record<string, string> = auth) =>
  exports.default.fetch(
    new Request(`https://edgework.test${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) }),
  );
const started = async (res: Response) => (await res.json()) as { id?: string; run_id?: string } as { id: string; run_id: string };

describe("code functions in the app (tests/fixtures/functions)", () => {
  it("POST /runs starts a function by name; its input is checked by its zod schema, naming the function and the field", async () => {
    const res = await post("/runs", { worker: "fn-shout", input: { kind: "opened" } });
    expect(res.status).toBe(202);
    const { id } = await started(res);
    expect(await settle(id)).toMatchObject({ worker: "fn-shout", status: "succeeded", output: { shouted: "OPENED" } });

    const bad = await post("/runs", { worker: "fn-shout", input: { kind: 7 } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^input does not match the input schema of function "fn-shout": kind: .*expected string/);
  });

  it("hostile: an output nested past what SQLite's JSON reads fails the run with a reason; it never leaves it running for good", async () => {
    for (const [depth, status] of [
      [MAX_OUTPUT_DEPTH, "succeeded"],
      [1000, "failed"],
      [30_000, "failed"],
    ] as const) {
      const id = `fn-deep-${depth}`;
      await stub(id).start({ id, worker: "fn-deep", input: { depth }, approvalMode: "ask", budget: {} });
      const view = await settle(id);
      expect(view.status, `depth ${depth}`).toBe(status);
      if (status === "failed")
        expect(view.error).toEqual({
          code: "invalid_output",
          message: `fn-deep: its output nests deeper than ${MAX_OUTPUT_DEPTH} levels, more than a run's output may`,
        });
    }
  });

  it("a webhook trigger starts a function", async () => {
    const res = await post("/hooks/fn-form", { kind: "hooked" }, { "X-Webhook-Token": "form-secret" });
    expect(res.status).toBe(202);
    const { run_id } = await started(res);
    expect(await settle(run_id)).toMatchObject({
      worker: "fn-shout",
      status: "succeeded",
      output: { shouted: "HOOKED" },
      trigger: { kind: "webhook", name: "fn-form" },
    });
  });

  it("a worker lists a function in workers: and calls it as a tool named after it", async () => {
    await script("fn-caller", [{ tool_calls: [{ id: "s", name: "fn-shout", arguments: { kind: "from a worker" } }] }, { text: "called it" }]);
    const { id } = await started(await post("/runs", { worker: "fn-caller", input: "go" }));
    const view = await settle(id);
    expect(view).toMatchObject({ status: "succeeded", output: "called it" });
    expect(view.call_tree!.tools[0]).toMatchObject({ name: "fn-shout", status: "ok", result: JSON.stringify({ shouted: "FROM A WORKER" }, null, 2) });
  });

  it("a function's tool call that needs approval pauses the run; after approval it resumes and posts exactly once", async () => {
    const { id } = await started(await post("/runs", { worker: "fn-poster", input: { url: effectUrl("fn-approve") } }));
    const paused = await settle(id);
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.approvals).toMatchObject([{ status: "pending", tool: "fx_fetch", worker_chain: ["fn-poster"] }]);
    expect(await effectCount("fn-approve")).toBe(0);
    expect((await post(`/runs/${id}/approvals/${paused.approvals[0]!.id}`, { decision: "approve" })).status).toBe(200);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { status: 200, clock: "number" } });
    expect(await effectCount("fn-approve")).toBe(1);
  });

  it("a function that catches every error around a call that asks for approval pauses anyway (its fallback is not the result)", async () => {
    const { id } = await started(await post("/runs", { worker: "fn-careful", input: { url: effectUrl("fn-careful") } }));
    const paused = await settle(id);
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.approvals).toMatchObject([{ status: "pending", tool: "fx_fetch", worker_chain: ["fn-careful"] }]);
    expect((await post(`/runs/${id}/approvals/${paused.approvals[0]!.id}`, { decision: "approve" })).status).toBe(200);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: { posted: 200 } });
    expect(await effectCount("fn-careful")).toBe(1);
  });

  it("interrupted (the object aborted) before each step in turn, a function still posts exactly once", async () => {
    for (let k = 0; k <= 4; k++) {
      const id = `fn-evict-${k}`;
      await stub(id).start({ id, worker: "fn-poster", input: { url: effectUrl(id) }, approvalMode: "ask", budget: {} });
      await stub(id).setTestHooks({ fault: { atJournalSize: k, mode: "abort" } });
      let view = await settle(id);
      let approvals = 0;
      while (view.status === "awaiting_approval") {
        expect((await stub(id).decide(view.approvals.find((a) => a.status === "pending")!.id, { decision: "approve", by: "test" })).ok).toBe(true);
        approvals++;
        view = await settle(id);
      }
      expect(view, `interrupted at step ${k}`).toMatchObject({ status: "succeeded", output: { status: 200 } });
      expect(approvals, `approvals with interruption at ${k}`).toBe(1);
      expect(await effectCount(id), `effects with interruption at ${k}`).toBe(1);
    }
  });

  describe("a function that catches every error never sees a pause (issue 19; functions.queue.test.ts: the same in queue mode)", () => {
    it("around ctx.llmAsk: no fallback post, the last call gets its own result, evicted before each step", () => askWithFallback("fn-fb", (id) => settle(id)));
    it("around a call that waits for a person: nothing posted while it waits; approved, no fallback", () =>
      approvalWithFallback("fn-afb", "approve", (id) => settle(id)));
    it("around a call that waits for a person: rejected (a real failure), the fallback posts once", () =>
      approvalWithFallback("fn-afb", "reject", (id) => settle(id)));
  });
});
