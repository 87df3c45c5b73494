/**
 * Who hears of a run's end (and, when asked, its pauses): the flow key object that
 * started it (src/triggers/flow: its key's slot frees, the next delivery starts), and its
 * completion webhooks (src/notify: its own `notify_url`, the app's NOTIFY_URL), the parent
 * of a child run (children.ts: told its end until it answers) and, at a parent's end, each of its
 * children that has not ended (cancelled: a child never outlives its parent). An outbox:
 * `plan` writes one row per listener in the transaction that writes the status event
 * (lifecycle.ts hooks), so an end is never recorded without its notifications; `sendDue`
 * sends them from the run's alarm (the `alarm.outbox` and `settle.outbox` io points) and
 * deletes each row once it is delivered or given up. At least once: a row whose send was
 * cut off (an evicted object) is sent again by the next alarm, with the same event id.
 * A flow key is told until it answers (backoff up to an hour); a webhook is retried with
 * backoff for NOTIFY_WINDOW_MS from its first attempt, and each attempt is a
 * `notify_sent` or `notify_failed` event on the run (the origin it went to, never the
 * secret). Owns the `outbox` table (made on first use) and the `notify` KV row (the run's
 * listeners, kept at its start). Needs from its host: `ctx` (the KV row, transactions),
 * `env` (NOTIFY_* vars, the FLOW_KEYS binding, PUBLIC_URL), the SQL, `row`, `event`,
 * `noted`, `now` (the run's clock) and `soon` (when "now" is for a wake-up).
 */

import { ConnectionSlots } from "../../src/engine/net/connection-slots";
import { numberVar } from "../../src/config";
import { appPath } from "../../src/http/base-path";
import { DEFAULT_NOTIFY_TIMEOUT_MS, postNotification, type Attempt } from "../../src/notify/deliver";
import { globalNotify } from "../../src/notify/global";
import { notificationId, notificationOf } from "../../src/notify/notification";
import { shownOrigin } from "../../src/notify/notify-url";
import { flowKeyObject } from "../../src/triggers/flow/rpc";
import { TERMINAL, type RunNotify, type RunStatusName } from "../../src/runs/types";
import { runStub } from "../../src/runs/rpc";
import type { ChildEnd } from "../../src/engine/types/children";
import type { Usage } from "../../src/engine/types/usage";
import { runUsage } from "./usage";
import type { AtRow, EventRow, OutboxRow, RunRow } from "../rows";
import { madeOnFirstUse, makeOnFirstUse } from "../schema";
import { parse } from "../sql";
import type { RunHost } from "./host";

/** How long a completion webhook is retried after its first attempt. */
export const NOTIFY_WINDOW_MS = 24 * 3_600_000;
/**
 * At most this many notifications are sent per alarm (each may wait NOTIFY_TIMEOUT_MS for a
 * receiver): the rest stay due, so the next alarm comes at once and this one stays far under the
 * platform's wall-time limit, however many pauses a run had and however slow its receiver.
 */
export const MAX_SENDS_PER_ALARM = 5;
/** Children cancelled per alarm, at once (one RPC each, no receiver of ours that can be slow): a fan-out's end takes a few alarms. */
export const MAX_CANCELS_PER_ALARM = 50;
/** The first retry's delay; each next one doubles it, up to MAX_RETRY_MS. */
const RETRY_MS = 30_000;
const MAX_RETRY_MS = 3_600_000;
/** NOTIFY_TIMEOUT_MS, or its default: a bad value is warned about, never thrown in the alarm, which must go on to the run. */
function notifyTimeoutMs(env: Env): number {
  try {
    return numberVar(env, "NOTIFY_TIMEOUT_MS", DEFAULT_NOTIFY_TIMEOUT_MS) || DEFAULT_NOTIFY_TIMEOUT_MS;
  } catch (err) {
    console.warn(`${(err as Error).message}; completion webhooks wait ${DEFAULT_NOTIFY_TIMEOUT_MS} ms`);
    return DEFAULT_NOTIFY_TIMEOUT_MS;
  }
}

/** Where the run's listeners are kept (one KV row, written with the run: none for a run nobody listens to). */
const LISTENERS = "notify";

type OutboxHost = Pick<RunHost, "ctx" | "env" | "sql" | "row" | "event" | "noted" | "now" | "soon">;

/** Keeps the run's listeners, in its start's transaction. */
export const keepListeners = (ctx: DurableObjectState, notify: RunNotify | undefined) => {
  if (notify && (notify.url || notify.flow || notify.parent)) ctx.storage.kv.put<RunNotify>(LISTENERS, notify);
};

export class RunOutbox {
  /** Whether this object has the table: only `plan` makes it, so a "no" holds until `plan`, which forgets the answer. */
  private made?: boolean;

  constructor(
    private readonly host: OutboxHost,
    /** This run's children that have not told their end (children.ts). */
    private readonly unfinishedChildren: () => string[],
  ) {}

  /** In the transaction of the status event just written (`status`): one row per listener that wants it. */
  plan(status: RunStatusName): void {
    const { ctx, env } = this.host;
    const ended = TERMINAL.includes(status);
    const listeners = ctx.storage.kv.get<RunNotify>(LISTENERS);
    const targets: Array<Pick<OutboxRow, "kind" | "dest">> = [];
    if (ended && listeners?.flow) targets.push({ kind: "flow", dest: listeners.flow });
    if (ended && listeners?.parent) targets.push({ kind: "parent", dest: listeners.parent.run });
    if (ended) targets.push(...this.childCancels());
    for (const hook of [listeners?.url, globalNotify(env)]) if (hook?.on.includes(ended ? "ended" : "paused")) targets.push({ kind: "url", dest: hook.url });
    this.insert(targets);
  }

  /** In the transaction of a cancel that lets the run undo its effects first: its unfinished children are cancelled now. */
  planChildCancels(): void {
    this.insert(this.childCancels());
  }

  private childCancels(): Array<Pick<OutboxRow, "kind" | "dest">> {
    return this.unfinishedChildren().map((child) => ({ kind: "child", dest: child }));
  }

  /** The rows of the status event just written, one per target. */
  private insert(targets: Array<Pick<OutboxRow, "kind" | "dest">>): void {
    const { sql } = this.host;
    if (!targets.length) return;
    makeOnFirstUse(sql, "outbox");
    // Asked again, not assumed: the transaction this runs in may still roll back, the table with it.
    this.made = undefined;
    const event = sql.one<{ seq: number }>`SELECT max(seq) AS seq FROM events`!.seq;
    const [now, due] = [this.host.now(), this.host.soon()];
    for (const [i, t] of targets.entries())
      sql.run`INSERT INTO outbox (event, target, kind, dest, due_at, first_at) VALUES (${event}, ${i}, ${t.kind}, ${t.dest}, ${due}, ${now})`;
  }

  /** Sends what is due (never tried yet, or its retry's time has come), in the order the events happened. */
  async sendDue(): Promise<void> {
    if (!this.hasTable()) return;
    const now = this.host.now();
    const run = this.host.row();
    if (!run) return;
    const cancels = this.host.sql.all<OutboxRow>`SELECT * FROM outbox WHERE kind = 'child' AND (attempts = 0 OR due_at <= ${now})
      ORDER BY event, target LIMIT ${MAX_CANCELS_PER_ALARM}`;
    await Promise.all(cancels.map((row) => this.cancelChild(row, run.id)));
    const due = this.host.sql.all<OutboxRow>`SELECT * FROM outbox WHERE kind != 'child' AND (attempts = 0 OR due_at <= ${now})
      ORDER BY event, target LIMIT ${MAX_SENDS_PER_ALARM}`;
    if (!due.length) return;
    // One line for this alarm's posts: each holds a connection until its response headers come.
    const connections = new ConnectionSlots();
    for (const row of due) {
      if (row.kind === "flow") await this.tellFlow(row, run.id);
      else if (row.kind === "parent") await this.tellParent(row, run.id);
      else await this.post(row, run, connections);
    }
  }

  /** An alarm time, brought forward to the next notification due. */
  clamp(at: number): number {
    if (!this.hasTable()) return at;
    const next = this.host.sql.one<AtRow>`SELECT min(due_at) AS at FROM outbox`?.at;
    return next == null ? at : Math.min(at, next);
  }

  /** The flow key object that started the run: its slot frees. Told again until it answers. */
  private async tellFlow(row: OutboxRow, runId: string): Promise<void> {
    try {
      await flowKeyObject(this.host.env, row.dest).runEnded(runId);
      this.host.sql.run`DELETE FROM outbox WHERE event = ${row.event} AND target = ${row.target}`;
    } catch {
      this.host.noted("flow_notify_failed", { attempt: row.attempts + 1 });
      this.later(row);
    }
  }

  /** The parent of this child run: its end, recorded there once (a repeat is a no-op). Told again until it answers. */
  private async tellParent(row: OutboxRow, runId: string): Promise<void> {
    const { ctx, sql } = this.host;
    const parent = ctx.storage.kv.get<RunNotify>(LISTENERS)?.parent;
    const event = sql.one<Pick<EventRow, "type" | "data" | "at">>`SELECT type, data, at FROM events WHERE seq = ${row.event}`;
    try {
      if (parent && event)
        await runStub(this.host.env, row.dest).childEnded(
          parent.key,
          runId,
          childEndOf(runId, event, () => this.lastUsage()),
        );
      sql.run`DELETE FROM outbox WHERE event = ${row.event} AND target = ${row.target}`;
    } catch {
      this.host.noted("parent_notify_failed", { attempt: row.attempts + 1 });
      this.later(row);
    }
  }

  /** A child of this ended run that has not ended: cancelled (an answer that it ended already is as good). Asked again until it answers. */
  private async cancelChild(row: OutboxRow, runId: string): Promise<void> {
    try {
      await runStub(this.host.env, row.dest).cancel(`its parent run ${runId} ended`);
      this.host.sql.run`DELETE FROM outbox WHERE event = ${row.event} AND target = ${row.target}`;
    } catch {
      this.host.noted("child_cancel_failed", { run: row.dest, attempt: row.attempts + 1 });
      this.later(row);
    }
  }

  private async post(row: OutboxRow, run: RunRow, connections: ConnectionSlots): Promise<void> {
    const { env, sql } = this.host;
    const event = sql.one<Pick<EventRow, "type" | "data" | "at">>`SELECT type, data, at FROM events WHERE seq = ${row.event}`;
    const id = await notificationId(run.id, row.event);
    const attempt = row.attempts + 1;
    const to = shownOrigin(row.dest);
    let result: Attempt = { ok: false, retry: false, error: "the event it notifies of is gone" };
    if (event) {
      const url = env.PUBLIC_URL ? `${env.PUBLIC_URL.replace(/\/+$/, "")}${appPath(`/runs/${encodeURIComponent(run.id)}`)}` : undefined;
      const body = JSON.stringify(notificationOf(id, { id: run.id, worker: run.worker, url }, { ...event, data: parse(event.data) }));
      const timeoutMs = notifyTimeoutMs(env);
      result = await postNotification(env, row.dest, { id, json: body }, { connections, timeoutMs, now: Date.now() });
    }
    this.host.ctx.storage.transactionSync(() => {
      if (result.ok) {
        sql.run`DELETE FROM outbox WHERE event = ${row.event} AND target = ${row.target}`;
        this.host.event("notify_sent", { event_id: id, to, status: result.status, attempt });
        return;
      }
      const retry = result.retry && this.host.now() - row.first_at < NOTIFY_WINDOW_MS;
      this.host.event("notify_failed", { event_id: id, to, ...(result.status ? { status: result.status } : {}), error: result.error, attempt, retry });
      if (retry) this.later(row);
      else sql.run`DELETE FROM outbox WHERE event = ${row.event} AND target = ${row.target}`;
    });
  }

  /** Tried again after a backoff: 30 s, doubling, at most an hour. */
  private later(row: OutboxRow): void {
    const at = this.host.now() + Math.min(RETRY_MS * 2 ** row.attempts, MAX_RETRY_MS);
    this.host.sql.run`UPDATE outbox SET attempts = attempts + 1, due_at = ${at} WHERE event = ${row.event} AND target = ${row.target}`;
  }

  /** The run's usage as readers show it (its journal's count): a cancel's event carries none. */
  private lastUsage(): Usage {
    return runUsage(this.host.sql, this.host.row()?.usage ?? null);
  }

  private hasTable(): boolean {
    return (this.made ??= madeOnFirstUse(this.host.sql, "outbox"));
  }
}

/**
 * A run's end event (run_succeeded, run_failed, run_cancelled) as its parent records it (children.ts
 * bounds it again), with what the run used: the event's usage, or (a cancel's carries none) `usage()`.
 */
function childEndOf(runId: string, event: Pick<EventRow, "type" | "data" | "at">, usage: () => Usage): ChildEnd {
  const data = parse<{ output?: unknown; error?: { code: string; message: string }; usage?: Usage } | null>(event.data) ?? {};
  const status = event.type === "run_succeeded" ? "succeeded" : event.type === "run_cancelled" ? "cancelled" : "failed";
  return {
    ended: "child",
    at: event.at,
    run: runId,
    status,
    ...(status === "succeeded" ? { output: data.output ?? null } : {}),
    ...(data.error ? { error: data.error } : {}),
    usage: data.usage ?? usage(),
  };
}
