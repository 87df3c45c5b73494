import { MAX_LINE, MAX_LINE_BYTES, type FlowConfig } from "../../src/triggers/flow/config";
import { decide } from "../../src/triggers/flow/decide";
import type { FlowRefusal } from "../../src/triggers/flow/outcome";
import { rateCheck } from "../../src/triggers/flow/rate";
import type { KeyStore } from "./key-store";

/**
 * Whether a flow key refuses a delivery of `bytes` at `now`: over the rate (`over: refuse`),
 * when it would act on it at once (nothing waits ahead of it); or the key's line full.
 * Refused, nothing is recorded: a redelivery is decided afresh.
 */
export function refusal(store: KeyStore, flow: FlowConfig, bytes: number, now: number): FlowRefusal | undefined {
  const line = store.lineSize();
  if (flow.rate?.over === "refuse" && line.n === 0) {
    const d = decide(flow, store.active(), rateCheck(flow.rate, store.tat(), now));
    if (d.act === "wait" && d.until !== undefined) {
      const after = Math.max(1, Math.ceil((d.until - now) / 1000));
      const per = `${flow.rate.limit} per ${flow.rate.periodMs / 1000} s`;
      return { refused: true, status: 429, error: `the key is over its rate (${per}): send it again in ${after} s`, retry_after: after };
    }
  }
  return lineFull(line, bytes);
}

/**
 * Whether a debounced delivery of `bytes` finds the key's line full: its batch joins the line as
 * one delivery, so the line, the batch so far and this one are counted together.
 */
export function debounceRefusal(store: KeyStore, bytes: number): FlowRefusal | undefined {
  const batched = store.batch().reduce((n, b) => n + b.bytes, 0);
  return lineFull(store.lineSize(), batched + bytes);
}

function lineFull(line: { n: number; bytes: number }, bytes: number): FlowRefusal | undefined {
  if (line.n >= MAX_LINE || line.bytes + bytes > MAX_LINE_BYTES) {
    const held = `${line.n} deliveries, ${line.bytes} bytes; at most ${MAX_LINE} and ${MAX_LINE_BYTES}`;
    return { refused: true, status: 429, error: `the key's line is full (${held}): send it again later`, retry_after: 60 };
  }
  return undefined;
}
