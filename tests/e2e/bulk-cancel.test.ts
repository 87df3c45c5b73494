import { expect, it } from "vitest";
import { bulkCancel } from "../../bench/bulk-cancel.mjs";

/**
 * Issue 30's acceptance, at its scale and as it would go in production: 1,000 live runs
 * cancelled by one POST /operations under wrangler dev, the whole app stopped and started again
 * (same state) part way; 100 runs outside the filter left alone. bench/bulk-cancel.mjs.
 */
it("a bulk cancel of 1,000 matching runs completes across a restart of the app, once per run, touching no run outside the filter", async () => {
  const r = await bulkCancel({ runs: 1000, others: 100, restartAfter: 300, say: (l: string) => console.log(`[bulk-cancel] ${l}`) });
  console.log("bulk cancel:", JSON.stringify({ ms: r.ms, startMs: r.startMs, restarted: r.restarted, counts: r.operation.counts }));
  expect(r.restarted).not.toBeNull();
  expect(r.operation).toMatchObject({ status: "done", counts: { done: 1000, failed: 0, skipped: 0 }, failures: [] });
  expect(r.matching).toEqual({ cancelled: 1000 });
  expect(r.outside.cancelled).toBeUndefined();
}, 420_000);
