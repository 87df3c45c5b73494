import type { BeforeStep } from "../../src/engine/journal/journal";
import type { KeyGrammar } from "../../src/engine/journal/keys";
import { StepTracer } from "../../src/engine/trace/step-tracer";
import type { JournalStore, RunOutcome } from "../../src/engine";
import { exportSpans, otlpSettings, type OtelVars, type OtlpSettings } from "../../src/otel/exporter";
import { dispatchMode } from "../engine-config";
import type { ModelDispatchRow, RunRow } from "../rows";
import { madeOnFirstUse } from "../schema";
import type { Sql } from "../sql";

/**
 * A run's OpenTelemetry traces (docs/observability.md): off unless an OTLP endpoint is
 * set. Each activation observes its journal (`observe`), the spans it made are sent
 * once it ends (`flush`, handed to `waitUntil`: the run never waits for the collector),
 * and a failed export is one log line, never a retry or a failed run.
 */
export class RunTracing {
  private tracer?: StepTracer;
  private settings: OtlpSettings | null = null;
  private runId = "";

  constructor(
    private readonly host: { ctx: Pick<DurableObjectState, "waitUntil">; env: Env; sql: Sql },
    private readonly send: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  /** The activation's journal store and `beforeStep`, observed when tracing is on (else as given). */
  observe(run: RunRow, grammar: KeyGrammar, vars: OtelVars, store: JournalStore, beforeStep: BeforeStep): { store: JournalStore; beforeStep: BeforeStep } {
    this.settings = otlpSettings(vars);
    this.tracer = undefined;
    if (!this.settings) return { store, beforeStep };
    this.runId = run.id;
    this.tracer = new StepTracer({
      runId: run.id,
      worker: run.worker,
      keyGrammar: grammar,
      captureContent: this.settings.captureContent,
      clock: Date,
      handedOff: dispatchMode(this.host.env) === "queue" ? (key) => this.handedOff(key) : undefined,
    });
    return { store: this.tracer.observe(store), beforeStep: this.tracer.beforeStep(beforeStep) };
  }

  /** The run's own span, when the activation ended it. */
  outcome(run: RunRow, outcome: RunOutcome): void {
    if (outcome.status !== "awaiting_approval") this.tracer?.runEnded(run.created_at, outcome);
  }

  /** A queued model request's hand-off (model-dispatch.ts keeps its row after the answer). */
  private handedOff(key: string): { at: number; attempt: number } | undefined {
    if (!madeOnFirstUse(this.host.sql, "model_dispatch")) return undefined;
    const row = this.host.sql.one<Pick<ModelDispatchRow, "sent_at" | "attempt">>`SELECT sent_at, attempt FROM model_dispatch WHERE key = ${key}`;
    return row && { at: row.sent_at, attempt: row.attempt };
  }

  /** Sends what the activation traced, off its critical path. */
  flush(): void {
    const spans = this.tracer?.drain() ?? [];
    if (!this.settings || spans.length === 0) return;
    const runId = this.runId;
    this.host.ctx.waitUntil(
      exportSpans(runId, spans, this.settings, this.send).then((r) => {
        if (r.failed || r.dropped)
          console.warn(JSON.stringify({ edgework: "trace_export_incomplete", run_id: runId, sent: r.sent, dropped: r.dropped, failed: r.failed ?? null }));
      }),
    );
  }
}
