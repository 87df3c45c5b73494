/**
 * Messages that came while the run worked (queued, running or paused): each waits its
 * turn, numbered as the conversation's next, and is taken when the run's current answer
 * is recorded — in the transaction that records it (lifecycle.ts `settle`), so the run
 * never ends with a message waiting, and the answer to it is part of the run's history
 * like any later message (`messageKey` in keys.ts, read by the engine's loop after each
 * final answer). A run that fails or is cancelled drops the messages still waiting, with
 * a `messages_dropped` event naming their numbers. Owns the `follow_ups` table (made on
 * first use). Needs from its host: the SQL and `event`; the journal, where a taken
 * message becomes a step.
 */

import { messageKey } from "../../src/engine/journal/keys";
import type { CountRow } from "../rows";
import { madeOnFirstUse, makeOnFirstUse } from "../schema";
import { json, parse, type JsonText } from "../sql";
import type { MessageStep } from "./conversation";
import type { RunHost } from "./host";
import type { LoggedJournalStore } from "./log";

interface FollowUpRow {
  n: number;
  step: JsonText<MessageStep>;
}

export class RunFollowUps {
  /** Whether this object has the table (memory only: asked again after an eviction). */
  private made = false;

  constructor(
    private readonly host: Pick<RunHost, "sql" | "event">,
    private readonly journal: Pick<LoggedJournalStore, "record">,
  ) {}

  /** Message `n` waits its turn (the caller numbered it after the messages taken and those waiting). */
  wait(n: number, step: MessageStep): void {
    if (!this.made) makeOnFirstUse(this.host.sql, "follow_ups");
    this.made = true;
    this.host.sql.run`INSERT INTO follow_ups (n, step) VALUES (${n}, ${json(step)})`;
  }

  /** How many wait. */
  count(): number {
    return this.has() ? this.host.sql.one<CountRow>`SELECT count(*) AS n FROM follow_ups`!.n : 0;
  }

  /** The waiting message whose sender id hashes to `id`, by number. */
  find(id: string): number | undefined {
    if (!this.has()) return undefined;
    return this.host.sql.one<Pick<FollowUpRow, "n">>`SELECT n FROM follow_ups WHERE step ->> '$.id' = ${id}`?.n;
  }

  /** In the success's transaction: the oldest waiting message becomes the conversation's next step of `root`; its number. */
  take(root: string): number | undefined {
    if (!this.has()) return undefined;
    const next = this.host.sql.one<FollowUpRow>`SELECT n, step FROM follow_ups ORDER BY n LIMIT 1`;
    if (!next) return undefined;
    this.host.sql.run`DELETE FROM follow_ups WHERE n = ${next.n}`;
    this.journal.record(messageKey(root, next.n), parse(next.step));
    return next.n;
  }

  /** In the transaction of a failure or a cancel: the messages waiting are not answered. */
  drop(reason: string): void {
    if (!this.has()) return;
    const dropped = this.host.sql.all<Pick<FollowUpRow, "n">>`SELECT n FROM follow_ups ORDER BY n`.map((r) => r.n);
    if (!dropped.length) return;
    this.host.sql.run`DELETE FROM follow_ups`;
    this.host.event("messages_dropped", { messages: dropped, reason });
  }

  private has(): boolean {
    return (this.made ||= madeOnFirstUse(this.host.sql, "follow_ups"));
  }
}
