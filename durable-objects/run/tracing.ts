import type { TraceParent } from "../../src/otel/otlp-json";
import type { RunNotify } from "../../src/runs/types";
import type { BeforeStep } from "../../src/engine/journal/journal";
import { waitEndOf, type KeyGrammar } from "../../src/engine/journal/keys";
import { StepTracer } from "../../src/engine/trace/step-tracer";
import type { WaitAsked } from "../../src/engine/trace/wait-events";
import { isPaused, type JournalStore, type RunOutcome } from "../../src/engine";
import { emptyUsage } from "../../src/engine/run/usage";
import { exportSpans, otlpSettings, type OtelVars, type OtlpSettings } from "../../src/otel/exporter";
import { dispatchMode } from "../engine-config";
import type { ApprovalRow, ModelDispatchRow, RunRow, WaitRow } from "../rows";
import { APPROVALS_CURRENT, madeOnFirstUse } from "../schema";
import { parse, type Sql } from "../sql";

type QuestionTimes = Pick<ApprovalRow, "created_at" | "expires_at" | "decided_at">;
type WaitAskedRow = Pick<WaitRow, "name" | "correlation" | "until" | "created_at">;

/** One activation's tracer and where its spans go. */
interface Traced {
  runId: string;
  tracer: StepTracer;
  settings: OtlpSettings;
}

/**
 * A run's OpenTelemetry traces (docs/observability.md): off unless an OTLP endpoint is
 * set. Each activation observes its journal (`observe`), the spans it made are sent
 * once it ends (`flush`, handed to `waitUntil`: the run never waits for the collector),
 * and a failed export is one log line, never a retry or a failed run.
 */
export class RunTracing {
  private active?: Traced;

  constructor(
    private readonly host: { ctx: Pick<DurableObjectState, "waitUntil" | "storage">; env: Env; sql: Sql; now(): number },
    private readonly send: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  /** The activation's journal store and `beforeStep`, observed when tracing is on (else as given). */
  observe(run: RunRow, grammar: KeyGrammar, vars: OtelVars, store: JournalStore, beforeStep: BeforeStep): { store: JournalStore; beforeStep: BeforeStep } {
    this.active = this.traced(run, grammar, vars);
    if (!this.active) return { store, beforeStep };
    const { tracer } = this.active;
    return { store: tracer.observe(store), beforeStep: tracer.beforeStep(beforeStep) };
  }

  /** The run's own span, when the activation ended it. */
  outcome(run: RunRow, outcome: RunOutcome): void {
    if (!isPaused(outcome)) this.active?.tracer.runEnded(run.created_at, outcome);
  }

  /** Sends what the activation traced, off its critical path. */
  flush(): void {
    if (this.active) this.export(this.active);
    this.active = undefined;
  }

  /**
   * The own span of a run ended outside an activation (cancelled, or failed by the stuck-run
   * sweep), sent at once: no activation follows to send it (one in flight keeps its own).
   */
  endedOutside(
    run: RunRow,
    ended: { status: "cancelled" } | { status: "failed"; error: { code: string; message: string } },
    grammar: KeyGrammar,
    vars: OtelVars,
  ): void {
    const traced = this.traced(run, grammar, vars);
    if (!traced) return;
    traced.tracer.runEnded(run.created_at, { ...ended, usage: parse(run.usage) ?? emptyUsage() });
    this.export(traced);
  }

  private traced(run: RunRow, grammar: KeyGrammar, vars: OtelVars): Traced | undefined {
    const settings = otlpSettings(vars);
    if (!settings) return undefined;
    const tracer = new StepTracer({
      runId: run.id,
      worker: run.worker,
      keyGrammar: grammar,
      captureContent: settings.captureContent,
      // The run's clock, which waits are measured by: a wait's events lie within its span.
      clock: { now: () => this.host.now() },
      handedOff: dispatchMode(this.host.env) === "queue" ? (key) => this.handedOff(key) : undefined,
      waitAsked: (key) => this.waitAsked(key),
    });
    return { runId: run.id, tracer, settings };
  }

  /** A queued model request's hand-off (model-dispatch.ts keeps its row after the answer). */
  private handedOff(key: string): { at: number; attempt: number } | undefined {
    if (!madeOnFirstUse(this.host.sql, "model_dispatch")) return undefined;
    const row = this.host.sql.one<Pick<ModelDispatchRow, "sent_at" | "attempt">>`SELECT sent_at, attempt FROM model_dispatch WHERE key = ${key}`;
    return row && { at: row.sent_at, attempt: row.attempt };
  }

  /** The row a wait was asked with (waits.ts), or a question's approval row (approvals.ts), for the wait whose end is at `key`. */
  private waitAsked(key: string): WaitAsked | undefined {
    const { sql } = this.host;
    if (waitEndOf(key)?.kind === "question") {
      const q = sql.one<QuestionTimes>`SELECT created_at, expires_at, decided_at FROM ${APPROVALS_CURRENT} AS a WHERE key = ${key}`;
      return q && { since: q.created_at, until: q.expires_at, ...(q.decided_at !== null ? { endedAt: q.decided_at } : {}) };
    }
    if (!madeOnFirstUse(sql, "waits")) return undefined;
    const w = sql.one<WaitAskedRow>`SELECT name, correlation, until, created_at FROM waits WHERE key = ${key}`;
    if (!w) return undefined;
    const { name, correlation } = w;
    return { since: w.created_at, until: w.until, ...(name !== null ? { name } : {}), ...(correlation !== null ? { correlation } : {}) };
  }

  private export({ runId, tracer, settings }: Traced): void {
    const spans = tracer.drain();
    if (spans.length === 0) return;
    this.host.ctx.waitUntil(
      exportSpans(runId, spans, settings, this.send, undefined, traceParent(this.host.ctx)).then((r) => {
        if (r.failed || r.dropped)
          console.warn(JSON.stringify({ edgework: "trace_export_incomplete", run_id: runId, sent: r.sent, dropped: r.dropped, failed: r.failed ?? null }));
      }),
    );
  }
}

/** A child run's place in its tree's trace (its parent, kept with its listeners: children.ts), if it is one. */
function traceParent(ctx: Pick<DurableObjectState, "storage">): TraceParent | undefined {
  const parent = ctx.storage.kv.get<RunNotify>("notify")?.parent;
  return parent?.root ? { root: parent.root, run: parent.run, key: parent.key } : undefined;
}
