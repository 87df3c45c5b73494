/**
 * A flow key's debounce: deliveries gather in the key's batch (key-store.ts) until the key
 * has been quiet for `after` (or `max_wait` passed since the first); then the batch becomes
 * one delivery in the key's line — the last one's input, or with `batch: true` every one's,
 * `{batch: [...]}` — which the key acts on like any other. A batch that reaches MAX_BATCH
 * deliveries or the run's input bound starts at once, and the next delivery begins another.
 */

import { MAX_INPUT_BYTES } from "../../src/runs";
import { MAX_BATCH, type FlowConfig } from "../../src/triggers/flow/config";
import { parse } from "../sql";
import type { Item, KeyStore } from "./key-store";

export class KeyBatch {
  constructor(
    private readonly store: KeyStore,
    private readonly transaction: <T>(fn: () => T) => T,
  ) {}

  /** The delivery joins the batch (one that would overflow it goes first, one that fills it goes at once). */
  add(flow: FlowConfig, item: Item, bytes: number, now: number): void {
    const batch = this.store.batch();
    if (batch.length && batch.reduce((n, b) => n + b.bytes, 0) + bytes > MAX_INPUT_BYTES) this.flush(flow);
    this.store.addToBatch(item, bytes, now);
    if (this.store.batch().length >= MAX_BATCH) this.flush(flow);
  }

  /** The batch becomes one delivery in the line, standing for each of its members. */
  flush(flow: FlowConfig): void {
    const rows = this.store.batch();
    if (!rows.length) return;
    const items = rows.map((r) => parse(r.item));
    const last = items.at(-1)!;
    const input = flow.debounce?.batch ? { batch: items.map((i) => i.input) } : last.input;
    const item: Item = { ...last, input, record: { ...last.record, deliveries: items.length }, members: items.map((i) => i.id) };
    this.transaction(() => {
      this.store.clearBatch();
      this.store.enqueue(item, new TextEncoder().encode(JSON.stringify(item)).length);
    });
  }

  /** When the batch starts if nothing more comes (Infinity: no batch). */
  due(flow: FlowConfig): number {
    const batch = this.store.batch();
    if (!batch.length || !flow.debounce) return Infinity;
    const { after, max_wait } = flow.debounce;
    return Math.min(batch.at(-1)!.at + after, max_wait === undefined ? Infinity : batch[0]!.at + max_wait);
  }
}
