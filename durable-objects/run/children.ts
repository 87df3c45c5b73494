/**
 * A run's child runs (`ctx.spawn`, `ctx.map`, `run: child`), both sides. As a parent: it
 * starts each child (idempotent per id: the engine derives the id from this run and the
 * spawn's key, src/engine/run/spawn-step.ts) with this run's approval mode and what is left
 * of its budget (the engine's figure, `childBudget`), and records each child's end once (its
 * usage bounded), under the spawn's `/end` key, when the child tells it (`ended`, the RunDO's
 * `childEnded`); a duplicate is a no-op. As a child: its parent is kept
 * with its listeners (outbox.ts, the `notify` KV row), and its end is told to the parent
 * from its outbox until the parent answers. Owns no table: the spawns and ends are journal
 * steps. Needs from its host: `env` (the RUNS binding), the SQL, `ctx` (transactions, KV),
 * `row`, `noted`, `wakeSoon` and `io` (the `child.start` point).
 */

import type { ChildEnd, ChildSpec, Children } from "../../src/engine/types/children";
import type { Budget } from "../../src/engine/types/budget";
import { boundedUsage } from "../../src/engine/run/usage";
import { CHILD_END_LIKE, childEndKey, parseKey } from "../../src/engine/journal/keys";
import { childRunIdFor } from "../../src/engine/run/spawn-step";
import { checkStart, runStub } from "../../src/runs";
import { PAUSED, TERMINAL, type ChildView, type ParentRef, type RunNotify, type StartRun } from "../../src/runs/types";
import { MAX_ATTRIBUTES } from "../../src/engine/attributes";
// The attribute a child run carries its parent's id in (`GET /runs?attr.parent_run=<id>` lists a run's children).
import { PARENT_ATTRIBUTE } from "../../src/api/attributes";
import type { RunRow } from "../rows";
import { json, parse } from "../sql";
import type { SqliteJournalStore } from "../sqlite-journal";
import type { RunHost } from "./host";

/** The most of a child's output its parent records (JSON bytes); past it the child's end is a failure that says so. */
export const MAX_CHILD_OUTPUT_BYTES = 1024 * 1024;
/**
 * The most of all its children's outputs a parent records (JSON bytes): every activation loads
 * the journal, so a thousand near-1 MiB outputs would put the parent past its memory for good.
 */
export const MAX_CHILD_OUTPUTS_TOTAL_BYTES = 16 * 1024 * 1024;
/** Where a run keeps its listeners, its parent among them (outbox.ts writes it at the start). */
const LISTENERS = "notify";

/** What the parent answers a child's end: recorded now, recorded before (a repeat), or nothing to record (the parent is gone, or refuses it). */
export type ChildEndAnswer = { ok: true; recorded: boolean } | { ok: false; error: string };

type ChildrenHost = Pick<RunHost, "ctx" | "env" | "sql" | "row" | "noted" | "wakeSoon" | "io">;

export class RunChildren {
  constructor(
    private readonly host: ChildrenHost,
    private readonly journal: SqliteJournalStore,
  ) {}

  /** This run's parent, if it is a child run (kept at its start). */
  parent(): ParentRef | undefined {
    return this.host.ctx.storage.kv.get<RunNotify>(LISTENERS)?.parent;
  }

  /** Where the engine starts this run's children: each a run of its own, started through the `child.start` io point. */
  port(run: RunRow): Children {
    return {
      start: async (id, key, spec) => {
        const req = this.startRequest(run, id, key, spec);
        if ("error" in req) return { ok: false, error: req.error };
        const started = await this.host.io("child.start", () => runStub(this.host.env, id).start(req));
        return { ok: true, id: started.id };
      },
    };
  }

  /** A child's start: checked against the catalog (worker, input, its size), carrying this run's approval mode, what is left of its budget, depth and parent. */
  private startRequest(run: RunRow, id: string, key: string, spec: ChildSpec): StartRun | { error: string } {
    const checked = checkStart(spec.worker, spec.input);
    if ("status" in checked) return { error: checked.error };
    const attributes = { ...spec.attributes, [PARENT_ATTRIBUTE]: run.id };
    if (Object.keys(attributes).length > MAX_ATTRIBUTES)
      return { error: `a child run has at most ${MAX_ATTRIBUTES - 1} attributes of its own (${PARENT_ATTRIBUTE} is the ${MAX_ATTRIBUTES}th)` };
    const listeners = this.host.ctx.storage.kv.get<RunNotify>(LISTENERS);
    const depth = (listeners?.parent?.depth ?? 0) + spec.depth;
    const trigger = parse<Record<string, unknown> | null>(run.trigger) ?? {};
    return {
      id,
      worker: checked.worker.name,
      input: checked.input,
      approvalMode: run.approval_mode,
      budget: childBudget(spec.budget, parse(run.budget) ?? {}, checked.worker.budget),
      // Who started the parent started the child: the same people may decide its approvals.
      trigger: { kind: "child", parent: run.id, ...(typeof trigger.initiator === "string" ? { initiator: trigger.initiator } : {}) },
      // The parent's completion webhook hears of the child's pauses and end too: the same people learn of its approvals.
      notify: { parent: { run: run.id, key, depth, root: listeners?.parent?.root ?? run.id }, ...(listeners?.url ? { url: listeners.url } : {}) },
      attributes,
    };
  }

  /**
   * A child's end (the child's outbox sends it until answered): recorded once under its spawn's
   * `/end` key, in one transaction with the check that the key is unrecorded; a paused parent wakes.
   * Refused for a child this run did not start under that key (its id is derived, so it is checked).
   */
  async ended(key: string, child: string, end: ChildEnd): Promise<ChildEndAnswer> {
    const spawn = parseKey(key);
    if (spawn.kind !== "effect" || spawn.effect !== "spawn") return { ok: false, error: "not a spawn's key" };
    const run = this.host.row();
    if (!run) return { ok: false, error: "unknown run" };
    if (child !== childRunIdFor(run.id, key))
      return { ok: false, error: `${String(child).slice(0, 140)} is no child this run started under ${key.slice(0, 200)}` };
    // The status read before the record: a step recorded after a pause reads as running again (RUN_CURRENT).
    const { recorded, paused } = this.host.ctx.storage.transactionSync(() => {
      const status = this.host.row()!.status;
      // An ended parent records nothing (it cancelled its unfinished children with its end); a repeat changes nothing.
      if (TERMINAL.includes(status) || this.host.sql.one`SELECT 1 AS taken FROM journal WHERE key = ${childEndKey(key)}`)
        return { recorded: false, paused: false };
      const taken = this.host.sql.one<{ n: number }>`SELECT coalesce(sum(length(value)), 0) AS n FROM journal WHERE key LIKE ${CHILD_END_LIKE}`!.n;
      this.journal.record(childEndKey(key), boundedEnd(end, child, MAX_CHILD_OUTPUTS_TOTAL_BYTES - taken));
      this.host.noted("child_ended", { run: child, status: end.status });
      return { recorded: true, paused: PAUSED.includes(status) };
    });
    // A parent paused wakes; one running sees the end when it pauses (pause.ts: the wait ended meanwhile).
    if (paused) await this.host.wakeSoon();
    return { ok: true, recorded };
  }

  /** The children this run started, each with whether it ended (spawn steps and their ends, from the journal). */
  list(): ChildView[] {
    const runId = this.host.row()?.id;
    const rows = this.host.sql.all<{ key: string; value: string }>`SELECT key, value FROM journal WHERE key LIKE '%/spawn:%' ORDER BY seq`;
    const ends = new Map<string, ChildEnd>();
    const spawns: Array<{ key: string; id: string; worker: string }> = [];
    for (const r of rows) {
      const k = parseKey(r.key);
      if (k.kind === "child_end") ends.set(k.spawn, parse(r.value));
      else if (k.kind === "effect" && k.effect === "spawn") {
        const v = parse<{ ok?: boolean; id?: string; worker?: string } | null>(r.value);
        // Only a child this run started (a fork's copied spawn names its source's child: never this run's to cancel).
        if (v?.ok && v.id && v.worker && runId !== undefined && v.id === childRunIdFor(runId, r.key)) spawns.push({ key: r.key, id: v.id, worker: v.worker });
      }
    }
    // A child that had not told its end when this run ended was cancelled with that end (outbox.ts), and tells nothing since.
    const unended = TERMINAL.includes(this.host.row()?.status ?? "queued") ? "cancelled" : "running";
    return spawns.map((s) => ({ id: s.id, worker: s.worker, call_path: s.key, status: ends.get(s.key)?.status ?? unended }));
  }

  /** The children that have not told this run their end: a parent that ends cancels them (outbox.ts, in the end's transaction). */
  unfinished(): string[] {
    return this.list()
      .filter((c) => c.status === "running" || c.status === "cancelled")
      .map((c) => c.id);
  }
}

/**
 * What a child run may spend: `given`, the engine's (what the parent had left at the spawn), never
 * past the parent's own limits (its run row's) nor the child worker's own (`budget:` in its file);
 * a limit the engine did not give (a spawn recorded before it did) is the parent's whole one.
 */
export function childBudget(given: Budget | undefined, parent: Budget, own: Budget = {}): Budget {
  const least = (...limits: Array<number | undefined>) => {
    const set = limits.filter((n): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0);
    return set.length ? Math.min(...set) : undefined;
  };
  const maxTokens = least(given?.maxTokens ?? parent.maxTokens, parent.maxTokens, own.maxTokens);
  const maxCostUsd = least(given?.maxCostUsd ?? parent.maxCostUsd, parent.maxCostUsd, own.maxCostUsd);
  const onExceed = given?.onExceed === "ask" || given?.onExceed === "fail" ? given.onExceed : parent.onExceed;
  return { ...(maxTokens !== undefined ? { maxTokens } : {}), ...(maxCostUsd !== undefined ? { maxCostUsd } : {}), ...(onExceed ? { onExceed } : {}) };
}

/**
 * A child's end as the parent records it: an output past MAX_CHILD_OUTPUT_BYTES becomes a failure
 * that says so (a row stays far below SQLite's limit); its usage, each field a finite number from 0
 * up (`boundedUsage`), or none.
 */
export function boundedEnd(end: ChildEnd, child: string, room = MAX_CHILD_OUTPUT_BYTES): ChildEnd {
  const status = end.status === "succeeded" || end.status === "failed" || end.status === "cancelled" ? end.status : "failed";
  const at = typeof end.at === "number" ? end.at : Date.now();
  const used = boundedUsage(end.usage);
  const usage = used ? { usage: used } : {};
  if (status === "succeeded") {
    const bytes = new TextEncoder().encode(json(end.output ?? null)).length;
    const most = Math.max(0, Math.min(MAX_CHILD_OUTPUT_BYTES, room));
    if (bytes <= most) return { ended: "child", at, run: child, status, output: end.output ?? null, ...usage };
    return {
      ended: "child",
      at,
      run: child,
      ...usage,
      status: "failed",
      error: {
        code: "output_too_large",
        message:
          most < MAX_CHILD_OUTPUT_BYTES
            ? `its output is ${bytes} bytes as JSON; this parent has recorded its children's outputs up to ${MAX_CHILD_OUTPUTS_TOTAL_BYTES} bytes in all`
            : `its output is ${bytes} bytes as JSON; a parent takes at most ${MAX_CHILD_OUTPUT_BYTES}`,
      },
    };
  }
  const error = end.error && { code: String(end.error.code).slice(0, 64), message: String(end.error.message).slice(0, 8000) };
  return { ended: "child", at, run: child, status, ...(error ? { error } : {}), ...usage };
}
