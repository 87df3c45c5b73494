/**
 * A conversation with a run: `POST /runs/:id/messages` sends its root worker another user
 * message. The message is a journal step (`messageKey` in keys.ts, read by the engine's
 * loop after each final answer), so the run replays its whole history and answers it as a
 * new turn. A run that succeeded takes it at once (running again); a run still working
 * (queued, running, paused) keeps it waiting its turn (follow-ups.ts), and takes it when
 * it has answered. A message may carry an id (an API caller's, an emailed reply's
 * delivery, a flow key's delivery): its hash is kept on the step, and the same id again
 * adds nothing. Owns no table: writes the message step with the lifecycle's `converse`
 * (succeeded → running, checked where it is written), reads `journal` and `events`.
 * Needs from its host: `env` (retention), the SQL, `row`, `wakeSoon`.
 */

import { sha256Hex } from "../../src/engine/ids";
import { messageKey, messageKeyRange, parseKey } from "../../src/engine/journal/keys";
import { MAX_MESSAGE_CHARS, type RecordedMessage } from "../../src/engine/run/conversation";
import { TERMINAL, type Answer, type ConversationMessage, type RunStatusName, type SentMessage } from "../../src/runs/types";
import type { CountRow, EventRow, RunRow } from "../rows";
import { parse } from "../sql";
import type { LoggedJournalStore } from "./log";
import type { RunCatalog } from "./catalog";
import type { RunFollowUps } from "./follow-ups";
import type { RunHost } from "./host";
import { CANCELLING_REFUSAL, type RunLifecycle } from "./lifecycle";
import { deletionDue, retentionDays } from "./retention";

export { MAX_MESSAGE_CHARS };

/** Messages a run takes after its input. */
export const MAX_MESSAGES = 200;
/**
 * Bytes the run's journal may hold when a message arrives. What the model is sent is
 * kept within its context by compaction (src/engine/run/compaction.ts): this bounds what
 * the run stores and what each activation loads (every step, to replay), not the model's
 * context. The journal keeps every raw step, compacted or not: they are the replay's
 * source (a step dropped would be asked again) and the run's audit.
 */
export const MAX_HISTORY_BYTES = 8_000_000;

/** A message step as the host records it: the engine reads `text`; `id`: the hash of its sender's id; `email`: it came as a reply by mail. */
export interface MessageStep extends RecordedMessage {
  id?: string;
  email?: { message_id: string | null };
}

/** Where a message comes from: `id` (as its sender gave it) makes a redelivery one message; `email`: a reply by mail. */
export type MessageOrigin = { id?: string } & Pick<MessageStep, "email">;

/** `live`: only a run that has not ended takes the message (a flow key's follow-up: an ended run is answered 410, and the key starts a new run). */
export interface SendOptions {
  live?: boolean;
}

/** Why a message is refused. */
type Refusal = Extract<Answer, { ok: false }>;

type ConversationHost = Pick<RunHost, "env" | "sql" | "row" | "wakeSoon">;

export class RunConversation {
  constructor(
    private readonly host: ConversationHost,
    private readonly parts: {
      journal: LoggedJournalStore;
      pinned: RunCatalog;
      lifecycle: Pick<RunLifecycle, "converse" | "endedInRow" | "cancelRequested">;
      followUps: Pick<RunFollowUps, "wait" | "count" | "find">;
    },
  ) {}

  /**
   * Records `text` as the conversation's next message: a run that succeeded is woken to answer
   * it; a run still working keeps it waiting its turn (`waiting: true`). A message whose id was
   * taken before changes nothing.
   */
  async send(text: unknown, origin: MessageOrigin = {}, opts: SendOptions = {}): Promise<Answer<SentMessage>> {
    // Hashed with where it came from: an API caller's id never matches a mail's, and any id fits the step.
    const id = origin.id === undefined ? undefined : await sha256Hex(`${origin.email ? "email" : "api"}\n${origin.id}`);
    const run = this.host.row(); // after the await: nothing below awaits before the message is recorded
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const { followUps } = this.parts;
    const taken = id === undefined ? undefined : this.steps(run.worker).find((m) => m.id === id);
    if (taken) return { ok: true, status: run.status, message: taken.n, duplicate: true };
    const waiting = id === undefined ? undefined : followUps.find(id);
    if (waiting !== undefined) return { ok: true, status: run.status, message: waiting, duplicate: true, waiting: true };
    const live = !TERMINAL.includes(run.status);
    if (live && this.parts.lifecycle.cancelRequested()) return { ok: false, status: 409, error: CANCELLING_REFUSAL };
    if (opts.live && !live)
      return { ok: false, status: 410, error: `the run ${run.status === "succeeded" ? "has answered" : run.status}: it takes no follow-up` };
    const refused = this.refusal(run.status, run) ?? textProblem(text);
    if (refused) return refused;
    const n = this.sent(run.worker) + followUps.count() + 2;
    if (n - 1 > MAX_MESSAGES) return { ok: false, status: 409, error: `the run took ${MAX_MESSAGES} messages, its most; start a new run` };
    const bytes = this.host.sql.one<CountRow>`SELECT coalesce(sum(length(CAST(value AS BLOB))), 0) AS n FROM journal`!.n;
    if (bytes > MAX_HISTORY_BYTES) return { ok: false, status: 413, error: `the run's history is ${bytes} bytes, over ${MAX_HISTORY_BYTES}: start a new run` };
    const message: MessageStep = { text: text as string, at: Date.now(), ...(id ? { id } : {}), ...(origin.email ? { email: origin.email } : {}) };
    if (live) {
      // Taken when the run has answered what it works on (lifecycle.ts settle): no wake-up, its activation or alarm is ahead.
      followUps.wait(n, message);
      return { ok: true, status: run.status, message: n, waiting: true };
    }
    const moved = this.parts.lifecycle.converse(n, () => this.parts.journal.record(messageKey(run.worker, n), message));
    if (!moved.ok) return this.refusal(moved.from!, run)!;
    await this.host.wakeSoon();
    return { ok: true, status: "running", message: n };
  }

  /** The message steps after the input, in order, each with its number (2 for the first). */
  steps(worker: string): Array<MessageStep & { n: number }> {
    const { from, to } = messageKeyRange(worker);
    return this.host.sql.all<{ key: string; value: string }>`SELECT key, value FROM journal WHERE key >= ${from} AND key < ${to} ORDER BY seq`.flatMap(
      ({ key, value }) => {
        const k = parseKey(key);
        return k.kind === "message" && k.frame === worker ? [{ ...parse<MessageStep>(value), n: k.n }] : [];
      },
    );
  }

  /**
   * The conversation so far: the input and each later message, each followed by the answer
   * the run gave it. `journal`: the run's steps in order, as its reader already loaded them.
   */
  messages(journal: ReadonlyMap<string, unknown>): ConversationMessage[] {
    const run = this.host.row();
    if (!run) return [];
    const users: ConversationMessage[] = [{ role: "user", text: inputText(parse(run.input)), at: run.created_at }];
    for (const [key, value] of journal) {
      if (parseKey(key).kind !== "message") continue;
      const m = value as RecordedMessage;
      users.push({ role: "user", text: m.text, at: m.at });
    }
    const answers = this.host.sql.all<Pick<EventRow, "data" | "at">>`SELECT data, at FROM events WHERE type = 'run_succeeded' ORDER BY seq`;
    return users.flatMap((u, i) => {
      const a = answers[i];
      return a ? [u, { role: "assistant" as const, text: answerText(parse(a.data).output), at: a.at }] : [u];
    });
  }

  /**
   * Why the run cannot take a message now: it ended without succeeding, ended under an older
   * version, is past its retention (being deleted), or its root is code. A run still working takes one (it waits its turn).
   */
  private refusal(status: RunStatusName, run: Pick<RunRow, "worker" | "updated_at">): Refusal | undefined {
    const { worker } = run;
    if (!TERMINAL.includes(status)) return this.rootRefusal(worker);
    if (status !== "succeeded")
      return { ok: false, status: 409, error: `the run ${status === "cancelled" ? "was cancelled" : "failed"}; only a run that succeeded continues` };
    // Its outcome is in its row, which its events cannot change (lifecycle.ts endedInRow): it could never answer.
    if (this.parts.lifecycle.endedInRow())
      return { ok: false, status: 409, error: "the run ended under an older edgework, before conversations: it takes no messages; start a new run" };
    if (Date.now() >= deletionDue(this.host.env, run.updated_at))
      return {
        ok: false,
        status: 409,
        error: `the run's retention (${retentionDays(this.host.env)} days, RUN_RETENTION_DAYS) is over: it is being deleted; start a new run`,
      };
    return this.rootRefusal(worker);
  }

  /** Only an LLM worker at the run's root, in its pinned catalog, converses. */
  private rootRefusal(worker: string): Refusal | undefined {
    const defs = this.parts.pinned.definitions(worker);
    const root = defs instanceof Error ? undefined : defs.catalog.get(worker);
    if (!root) return { ok: false, status: 409, error: `the run's worker "${worker}" is not in its catalog any more` };
    if (root.code) return { ok: false, status: 409, error: `the run's root "${worker}" is a code function: only an LLM worker takes messages` };
    return undefined;
  }

  /** Messages taken after the input. */
  private sent(worker: string): number {
    const { from, to } = messageKeyRange(worker);
    return this.host.sql.one<CountRow>`SELECT count(*) AS n FROM journal WHERE key >= ${from} AND key < ${to}`!.n;
  }
}

function textProblem(text: unknown): Refusal | undefined {
  if (typeof text !== "string" || !text.trim()) return { ok: false, status: 400, error: "text: a message needs some text" };
  if (text.length > MAX_MESSAGE_CHARS) return { ok: false, status: 413, error: `text: ${text.length} characters, over ${MAX_MESSAGE_CHARS}` };
  return undefined;
}

/** An answer as text: the output if it is a string, else its JSON. */
export const answerText = (output: unknown) => (typeof output === "string" ? output : JSON.stringify(output));

/** The run's input as its first message: the default input's string, else JSON. */
function inputText(value: unknown): string {
  if (typeof value === "string") return value;
  const input = value as { input?: unknown } | null;
  if (input && typeof input.input === "string" && Object.keys(input).length === 1) return input.input;
  return JSON.stringify(value);
}
