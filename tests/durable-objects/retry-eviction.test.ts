import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { script, settle, stub } from "./helpers";

const UPSTREAM = "https://flaky.example/orders";
/** Every request the upstream saw, by its idempotency key; it answers 503 twice, then 200. */
let seen: Array<string | null> = [];

beforeEach(() => {
  seen = [];
  const upstream = globalThis.fetch;
  // The Durable Object runs in this isolate: its http tool reaches this fake upstream.
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://flaky.example/")) return upstream(input, init);
    seen.push(new Headers(init?.headers).get("idempotency-key"));
    return seen.length <= 2 ? new Response("busy", { status: 503 }) : Response.json({ made: true });
  });
});
afterEach(() => vi.restoreAllMocks());

describe("a retried call across an eviction", () => {
  for (const mode of ["abort", "throw"] as const) {
    it(`evicted (${mode}) between two tries, the run resumes at the next try: three requests, one key, one success`, async () => {
      const id = `retry-evict-${mode}`;
      await script("retry-poster", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: UPSTREAM, method: "POST", body: "{}" } }] }, { text: "posted" }]);
      await stub(id).start({ id, worker: "retry-poster", input: { input: "post" }, approvalMode: "ask", budget: {} });
      // Steps: the model's answer, then try 1's failure: the fault stops the run before try 2.
      await stub(id).setTestHooks({ fault: { atJournalSize: 2, mode } });
      const count = { activations: 0, failed: 0 };
      const afterEach: number[] = [];
      const view = await settle(id, { count, afterActivation: async () => void afterEach.push(seen.length) });
      expect(view).toMatchObject({ status: "succeeded", output: "posted" });
      expect(count.failed).toBe(1);
      // The stopped activation had made try 1 alone; the next made tries 2 and 3.
      expect(afterEach[0]).toBe(1);
      expect(seen).toHaveLength(3);
      expect(new Set(seen).size).toBe(1);
      expect(seen[0]).toMatch(/^ew_[0-9a-f]{40}$/);
      expect(view.call_tree!.tools[0]).toMatchObject({ status: "ok" });
    });
  }
});
