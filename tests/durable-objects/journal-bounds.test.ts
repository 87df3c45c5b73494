import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunView } from "../../src/runs/types";
import { MAX_STEP_BYTES, utf8Bytes } from "../../src/engine/journal/bounds";
import { modelRequests, script, settle, stub } from "./helpers";

const UPSTREAM = "https://big.example/orders";
/**
 * The upstream's answer: 1,000,000 characters of Japanese text, accents, quotes and
 * control characters — as the tool result's JSON 3.56 MB, over the production row
 * limit (2 MB) and over what the test pool's SQLite accepts (< 3 MB).
 */
const BODY = '日本語 é"\u0001\u0002\u0003'.repeat(111_112).slice(0, 1_000_000);
let posts = 0;

beforeEach(() => {
  posts = 0;
  const upstream = globalThis.fetch;
  // The Durable Object runs in this isolate: its http tool reaches this fake upstream.
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://big.example/")) return upstream(input, init);
    posts++;
    return new Response(BODY, { headers: { "content-type": "text/plain; charset=utf-8" } });
  });
});
afterEach(() => vi.restoreAllMocks());

/** The run's journal rows as stored: key, value text, and the row's size in UTF-8 bytes. */
const journalRows = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_i, state) =>
    state.storage.sql
      .exec<{ key: string; value: string }>("SELECT key, value FROM journal ORDER BY seq")
      .toArray()
      .map((r) => ({ ...r, bytes: utf8Bytes(r.key) + utf8Bytes(r.value) })),
  );

/** Starts big-poster, approves its POST when it pauses, and drives it to the end. */
async function approvedPost(id: string, fault?: { atJournalSize: number; mode: "throw" | "abort" }) {
  await script("big-poster", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: UPSTREAM, method: "POST", body: "{}" } }] }, { text: "posted" }]);
  await stub(id).start({ id, worker: "big-poster", input: { input: "post" }, approvalMode: "ask", budget: {} });
  if (fault) await stub(id).setTestHooks({ fault });
  const count = { activations: 0, failed: 0 };
  let view: RunView = await settle(id, { count });
  expect(view.status).toBe("awaiting_approval");
  expect((await stub(id).decide(view.approvals[0]!.id, { decision: "approve", by: "test" })).ok).toBe(true);
  view = await settle(id, { count });
  return { view, count };
}

async function expectPostedOnceAndRecordedCut(id: string, view: RunView) {
  expect(view).toMatchObject({ status: "succeeded", output: "posted" });
  expect(posts).toBe(1);
  const full = utf8Bytes(JSON.stringify({ status: 200, content_type: "text/plain; charset=utf-8", body: BODY, truncated: false }));
  expect(full).toBeGreaterThan(3_500_000);
  const rows = await journalRows(id);
  const result = rows.find((r) => r.key.endsWith("/result"))!;
  const recorded = JSON.parse(result.value) as { ok: boolean; value: string; truncatedFrom: number };
  expect(recorded.ok).toBe(true);
  expect(recorded.truncatedFrom).toBeGreaterThan(MAX_STEP_BYTES);
  expect(recorded.value).toMatch(/…\[cut by edgework to fit the run's journal: \d+ bytes in full\]$/);
  // Every row, measured as stored, is within the bound.
  for (const r of rows) expect(r.bytes, r.key).toBeLessThanOrEqual(MAX_STEP_BYTES);
  const requests = (await modelRequests("big-poster")) as Array<{ messages: Array<{ role: string; content: string }> }>;
  expect(requests).toHaveLength(2);
  expect(requests[1]!.messages.find((m) => m.role === "tool")!.content).toBe(recorded.value);
  expect(view.call_tree!.tools[0]).toMatchObject({ status: "ok", truncatedFrom: recorded.truncatedFrom });
}

describe("values too big for a journal row", () => {
  it("an approved POST whose result is 3.56 MB as JSON is recorded cut to fit and flagged, and posted once", async () => {
    const { view, count } = await approvedPost("bound-post");
    expect(count).toEqual({ activations: 2, failed: 0 });
    await expectPostedOnceAndRecordedCut("bound-post", view);
  });

  for (const mode of ["throw", "abort"] as const) {
    it(`interrupted (${mode}) right after the oversized result is recorded, the resumed run does not post again`, async () => {
      // Steps: model, approval notification, decision, result (4): the fault stops the step after it.
      const { view, count } = await approvedPost(`bound-fault-${mode}`, { atJournalSize: 4, mode });
      expect(count).toEqual({ activations: 3, failed: 1 });
      await expectPostedOnceAndRecordedCut(`bound-fault-${mode}`, view);
    });
  }

  it("an oversized model answer fails the run at once: one request, one activation, code too_large", async () => {
    const id = "bound-answer";
    await script("big-poster", [{ text: "日本語のテキスト".repeat(150_000) }]);
    await stub(id).start({ id, worker: "big-poster", input: { input: "talk" }, approvalMode: "ask", budget: {} });
    const count = { activations: 0, failed: 0 };
    const view = await settle(id, { count });
    expect(count).toEqual({ activations: 1, failed: 0 });
    expect(view).toMatchObject({
      status: "failed",
      error: {
        code: "too_large",
        message: expect.stringMatching(
          /big-poster\.worker: model openai:big-poster answered with \d+ bytes .* over the journal's bound of 1500000 bytes per step/,
        ),
      },
      usage: { requests: 1 },
    });
    expect(await modelRequests("big-poster")).toHaveLength(1);
  });

  it("a journal write every retry would repeat (SQLITE_TOOBIG) fails the run at once, with a message and no SQL", async () => {
    const id = "bound-toobig";
    await script("big-poster", [{ text: "fine" }, { text: "fine" }]);
    await stub(id).start({ id, worker: "big-poster", input: { input: "talk" }, approvalMode: "ask", budget: {} });
    // Past the engine's bound on purpose: what if a value reached SQLite too big anyway?
    await runInDurableObject(env.RUNS.getByName(id), (instance) => {
      // The store the activation writes through (activation.ts).
      type Store = { put(k: string, v: unknown): void };
      const journal = (instance as unknown as { parts: { activation: { parts: { journal: Store } } } }).parts.activation.parts.journal;
      const put = journal.put.bind(journal);
      journal.put = (key, value) => put(key, { value, padding: "x".repeat(3_100_000) });
    });
    const count = { activations: 0, failed: 0 };
    const view = await settle(id, { count });
    expect(count).toEqual({ activations: 1, failed: 0 });
    expect(view).toMatchObject({
      status: "failed",
      error: {
        code: "storage",
        message: expect.stringMatching(
          /^the journal could not record step big-poster\/turn:1\/model \(\d+ characters\): string or blob too big: SQLITE_TOOBIG$/,
        ),
      },
    });
    expect(await modelRequests("big-poster")).toHaveLength(1);
  });
});
