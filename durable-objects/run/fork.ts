/**
 * Forking a run at a step: a new run whose journal is the source's prefix before a
 * key (keys.ts defines the prefix), started again from there. Both sides live here:
 * the source answers what it is and hands its prefix over in batches; the new run's
 * object pulls them into its own journal, then starts. Owns no table: writes the new
 * run's `journal` rows (and its key grammar in `meta`) before `RunControls.start`
 * writes its `run` row. Needs from its host: `ctx`, `env` (RUNS), the SQL, `row`, `keyGrammar`.
 */

import { catalog } from "../../src/catalog";
import { copiedFrom, keyProblem } from "../../src/engine/journal/fork-prefix";
import { utf8Bytes } from "../../src/engine/journal/bounds";
import { snapshotFor, type CatalogSnapshot } from "../../src/pinned-catalog";
import { FORK_FROM_START, FORK_LIMITS, forkTrigger, type ForkCopy, type ForkRows, type ForkRun, type ForkSource } from "../../src/runs/fork";
import { initiatorAddress } from "../../src/runs/initiator";
import { runStub, type RunRpc } from "../../src/runs/rpc";
import type { Answer, RunStatusName, StartRun } from "../../src/runs/types";
import type { CountRow, JournalRow, RunRow } from "../rows";
import type { Attributes } from "../../src/engine/attributes";
import { parseKey } from "../../src/engine/journal/keys";
import { parse } from "../sql";
import type { RunCatalog } from "./catalog";
import type { RunHost } from "./host";
import { tombstoneOf } from "./retention";
import { markForkCopy, type SqliteJournalStore } from "../sqlite-journal";

type ForkHost = Pick<RunHost, "ctx" | "env" | "sql" | "row" | "keyGrammar">;

/** The parts of the run a fork reads (the source's pinned snapshot), its journal's store (the copy writes past it) and how the new run starts (RunControls.start). */
export interface ForkParts {
  pinned: RunCatalog;
  journal: Pick<SqliteJournalStore, "forget">;
  start(req: StartRun, pinned: CatalogSnapshot | null): Promise<{ status: RunStatusName; created: boolean }>;
}

const NOTHING_COPIED: ForkCopy = { rows: 0, bytes: 0, batches: 0 };

/** RunDO's `fork` (as the new run), `forkSource` and `forkRows` (as the source). */
export class RunFork {
  constructor(
    private readonly host: ForkHost,
    private readonly parts: ForkParts,
  ) {}

  // ——— As the source: read only, so a source (ended or running) is never changed ———

  /** The run to start again and where `at` lies in its journal, or why it cannot be forked there. */
  source(at: string): Answer<{ source: ForkSource }> {
    const run = this.host.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const grammar = this.host.keyGrammar();
    // Before the first step: the whole run again (a bulk "re-run after a fix"); never from the API, whose `at` is a step.
    const fromStart = at === FORK_FROM_START;
    const problem = fromStart ? undefined : keyProblem(at, run.worker, grammar);
    if (problem) return { ok: false, status: 400, error: `at: ${JSON.stringify(at.slice(0, 200))} ${problem}` };
    // Looked up as a whole key (a bound parameter): the first row recorded under it.
    const atSeq = fromStart ? 0 : (this.host.sql.one<{ seq: number | null }>`SELECT min(seq) AS seq FROM journal WHERE key = ${at}`?.seq ?? null);
    if (atSeq === null)
      return { ok: false, status: 400, error: `at: run ${run.id} has no step ${JSON.stringify(at)} (GET /runs/${run.id}/journal lists its steps)` };
    const size = this.host.sql.one<CountRow & { bytes: number }>`
      SELECT count(*) AS n, coalesce(sum(length(CAST(key AS BLOB)) + length(CAST(value AS BLOB))), 0) AS bytes FROM journal WHERE seq < ${atSeq}`!;
    if (size.n > FORK_LIMITS.rows || size.bytes > FORK_LIMITS.bytes) {
      return {
        ok: false,
        status: 413,
        error: `the steps before ${JSON.stringify(at)} are ${size.n} rows and ${size.bytes} bytes; a fork copies at most ${FORK_LIMITS.rows} rows and ${FORK_LIMITS.bytes} bytes (fork at an earlier step)`,
      };
    }
    const source: ForkSource = {
      worker: run.worker,
      input: parse(run.input),
      approvalMode: run.approval_mode,
      budget: parse(run.budget),
      catalog: this.parts.pinned.snapshot(),
      grammar,
      initiator: initiatorAddress(parse(run.trigger)),
      attributes: this.attributesBefore(run, atSeq),
      atSeq,
      rows: size.n,
      bytes: size.bytes,
    };
    return { ok: true, source };
  }

  /** The run's attributes as they stood at `atSeq`: its start's, under those its code set in the prefix (attr steps, in order). */
  private attributesBefore(run: RunRow, atSeq: number): Attributes {
    const attributes = parse<Attributes | null>(run.attributes) ?? {};
    // The pattern is short (SQLite bounds LIKE at 50 bytes) and only narrows: parseKey decides.
    for (const r of this.host.sql.all<
      Pick<JournalRow, "key" | "value">
    >`SELECT key, value FROM journal WHERE seq < ${atSeq} AND key LIKE '%/attr:%' ORDER BY seq`) {
      const k = parseKey(r.key);
      const step = parse<{ name?: string; value?: string }>(r.value);
      if (k.kind === "effect" && k.effect === "attr" && typeof step?.name === "string" && typeof step.value === "string") attributes[step.name] = step.value;
    }
    return attributes;
  }

  /**
   * The prefix's rows after seq `after`, in the run's order, as many as fit in one batch
   * (`FORK_LIMITS.batchBytes`, at least one row). Sizes are read first, values only for
   * the batch; each key is checked against the grammar, and decisions whose gated step
   * is not in the prefix are left out (`copiedFrom`).
   */
  rows(atSeq: number, after: number): Answer<ForkRows> {
    const run = this.host.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { sql } = this.host;
    const sizes = sql.all<{ seq: number; bytes: number }>`
      SELECT seq, length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)) AS bytes FROM journal WHERE seq > ${after} AND seq < ${atSeq} ORDER BY seq`;
    let taken = 0;
    for (let bytes = 0; taken < sizes.length && (taken === 0 || bytes + sizes[taken]!.bytes <= FORK_LIMITS.batchBytes); taken++) bytes += sizes[taken]!.bytes;
    if (taken === 0) return { ok: true, rows: [], next: null };
    const until = sizes[taken - 1]!.seq;
    const grammar = this.host.keyGrammar();
    const copies = copiedFrom(new Set(sql.all<{ key: string }>`SELECT key FROM journal WHERE seq < ${atSeq}`.map((r) => r.key)), grammar);
    const rows: ForkRows["rows"] = [];
    for (const r of sql.all<JournalRow>`SELECT seq, key, value, at, started_at FROM journal WHERE seq > ${after} AND seq <= ${until} ORDER BY seq`) {
      const problem = keyProblem(r.key, run.worker, grammar);
      if (problem) return { ok: false, status: 409, error: `journal row ${r.seq} of run ${run.id}: its key ${problem}; this run cannot be forked` };
      if (copies(r.key)) rows.push({ key: r.key, value: r.value, at: r.at, startedAt: r.started_at });
    }
    return { ok: true, rows, next: taken < sizes.length ? until : null };
  }

  // ——— As the new run ———

  /**
   * Copies the source's prefix before `req.at` into this (new) run's journal, then
   * starts it: every step copied replays, the first one not copied runs. Idempotent
   * for an id that already holds a run. A copy that stops half way leaves no run row
   * (the object stays unknown) and is discarded by the next attempt.
   */
  async fork(req: ForkRun): Promise<Answer<{ status: RunStatusName; created: boolean; copied: ForkCopy }>> {
    const existing = tombstoneOf(this.host.ctx) ?? this.host.row();
    if (existing) return { ok: true, status: existing.status, created: false, copied: NOTHING_COPIED };
    const stub = runStub(this.host.env, req.source);
    const asked = await stub.forkSource(req.at);
    if (!asked.ok) return asked;
    const { source } = asked;
    let pinned = source.catalog;
    if (req.definitions === "current") {
      if (!catalog().get(source.worker))
        return { ok: false, status: 409, error: `worker "${source.worker}" is not in the current catalog; fork with definitions "pinned"` };
      pinned = await snapshotFor(source.worker);
    }
    const copied = await this.copy(stub, source);
    if (!copied.ok) return copied;
    const trigger = forkTrigger({ run: req.source, at: req.at }, source.initiator);
    const started = await this.parts.start(
      {
        id: req.id,
        worker: source.worker,
        input: source.input,
        approvalMode: req.approvalMode ?? source.approvalMode,
        budget: source.budget,
        trigger,
        attributes: source.attributes,
      },
      pinned,
    );
    return { ok: true, ...started, copied: copied.copied };
  }

  /** Pulls the prefix batch by batch, each batch written in one transaction. */
  private async copy(stub: RunRpc, source: ForkSource): Promise<Answer<{ copied: ForkCopy }>> {
    const { ctx, sql } = this.host;
    this.discard();
    if (source.grammar === 1) sql.run`INSERT INTO meta (key, value) VALUES ('key_grammar', '1')`;
    const copied = { ...NOTHING_COPIED };
    try {
      for (let after: number | null = 0; after !== null; ) {
        const batch = await stub.forkRows(source.atSeq, after);
        if (!batch.ok) {
          this.discard();
          return batch;
        }
        ctx.storage.transactionSync(() => {
          for (const r of batch.rows) sql.run`INSERT INTO journal (key, value, at, started_at) VALUES (${r.key}, ${r.value}, ${r.at}, ${r.startedAt})`;
          markForkCopy(sql);
        });
        this.parts.journal.forget();
        copied.rows += batch.rows.length;
        copied.bytes += batch.rows.reduce((n, r) => n + utf8Bytes(r.key) + utf8Bytes(r.value), 0);
        copied.batches++;
        after = batch.next;
      }
    } catch (err) {
      this.discard();
      throw err;
    }
    return { ok: true, copied };
  }

  /** What an interrupted copy left (there is no run row yet: nothing else reads these). */
  private discard(): void {
    this.host.sql.run`DELETE FROM journal`;
    this.host.sql.run`DELETE FROM meta WHERE key IN ('key_grammar', 'forked_until')`;
    this.parts.journal.forget();
  }
}
