// The published unit prices (Workers Paid, read 2026-11-22) and what a run costs with them.
// Durable Objects: developers.cloudflare.com/durable-objects/platform/pricing/ — requests (RPC calls
// and alarm invocations) $0.15/M, duration $12.50/M GB-s at 128 MB while active (an object awaiting
// a fetch is active; an idle one that can hibernate is not billed), SQLite rows written $1.00/M,
// rows read $0.001/M. Queues: developers.cloudflare.com/queues/platform/pricing/ — $0.40/M
// operations, a message ≤ 64 KB costs 3 (write, read, delete). Workers Standard:
// developers.cloudflare.com/workers/platform/pricing/ — $0.30/M requests (a queue consumer
// invocation is one), $0.02/M CPU ms. All before the plan's included amounts.
/** Queue mode's lease (durable-objects/model-dispatch.ts LEASE_MS): renewed RENEWALS_PER_LEASE (4) times per lease while the model thinks. */
const LEASE_SECONDS = 60;
export const RENEW_EVERY_SECONDS = LEASE_SECONDS / 4;

export const PRICES = {
  doRequestPerM: 0.15,
  gbSecondPerM: 12.5,
  objectGb: 0.128,
  rowWrittenPerM: 1.0,
  rowReadPerM: 0.001,
  queueOperationPerM: 0.4,
  operationsPerMessage: 3,
  workerRequestPerM: 0.3,
  workerCpuMsPerM: 0.02,
};

/**
 * The cost of one run, line by line. `measured`: what the run's object did with a
 * zero-latency model (requests, rows, its own active milliseconds) and, in queue
 * mode, the messages and consumer invocations it caused. `modelSeconds` per request:
 * the object is active for them only when it awaits the model itself (`direct`).
 */
export function priceRun({ mode, modelRequests, modelSeconds, measured }) {
  // Queue mode, per request the model takes long over: the consumer renews its claim (one request,
  // one row) every RENEW_EVERY_SECONDS while the model thinks, and the lapse alarm fires once a minute to find it renewed
  // (one request and one activation, priced at the measured mean activation time).
  const renewals = mode === "queue" ? modelRequests * Math.max(0, Math.ceil(modelSeconds / RENEW_EVERY_SECONDS) - 1) : 0;
  const lapseChecks = mode === "queue" ? modelRequests * Math.floor(modelSeconds / LEASE_SECONDS) : 0;
  const meanActivationMs = measured.alarms ? measured.activeMs / measured.alarms : 0;
  const activeSeconds = (measured.activeMs + lapseChecks * meanActivationMs) / 1000 + (mode === "direct" ? modelRequests * modelSeconds : 0);
  const gbSeconds = activeSeconds * PRICES.objectGb;
  const requests = measured.requests + renewals + lapseChecks;
  const rowsWritten = measured.rowsWritten + renewals;
  const lines = [
    ["Durable Object requests", requests, requests * PRICES.doRequestPerM],
    ["Durable Object duration (GB-s)", gbSeconds, gbSeconds * PRICES.gbSecondPerM],
    ["rows written", rowsWritten, rowsWritten * PRICES.rowWrittenPerM],
    ["rows read", measured.rowsRead, measured.rowsRead * PRICES.rowReadPerM],
  ];
  if (mode === "queue") {
    const operations = measured.messages * PRICES.operationsPerMessage;
    lines.push(
      ["Queue operations", operations, operations * PRICES.queueOperationPerM],
      ["Worker requests (consumer invocations)", measured.consumerInvocations, measured.consumerInvocations * PRICES.workerRequestPerM],
      ["Worker CPU ms (consumer, bounded by its wall time)", measured.consumerMs, measured.consumerMs * PRICES.workerCpuMsPerM],
    );
  }
  const priced = lines.map(([unit, count, perMillionUsd]) => ({ unit, count, usd: perMillionUsd / 1e6 }));
  return { mode, modelSeconds, activeSeconds, renewals, lapseChecks, lines: priced, usd: priced.reduce((s, l) => s + l.usd, 0) };
}
