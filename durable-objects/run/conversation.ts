/**
 * A conversation with a finished run: `POST /runs/:id/messages` sends its root worker
 * another user message. The message is a journal step (`messageKey` in keys.ts, read by
 * the engine's loop after each final answer), so the run replays its whole history and
 * answers it as a new turn. One message at a time: only a run that succeeded takes one,
 * and taking it sets the run running again. Owns no table: writes the message step and
 * the `run_running` event, reads `journal` and `events`. Needs from its host: `ctx`
 * (transactions), the SQL, `row`, `event`, `wakeSoon`.
 */

import { messageKey, parseKey } from "../../src/engine/journal/keys";
import type { RecordedMessage } from "../../src/engine/run/conversation";
import { TERMINAL, type Answer, type ConversationMessage, type RunStatusName } from "../../src/runs/types";
import type { CountRow, EventRow } from "../rows";
import { parse } from "../sql";
import type { LoggedJournalStore } from "./log";
import type { RunCatalog } from "./catalog";
import type { RunHost } from "./host";

/** Messages a run takes after its input. */
export const MAX_MESSAGES = 50;
/** Characters of one message. */
export const MAX_MESSAGE_CHARS = 16_000;
/**
 * Bytes the run's journal may hold when a message arrives: the root worker sends its
 * whole history to the model each turn, and 2 MB of it is past any model's context.
 */
export const MAX_HISTORY_BYTES = 2_000_000;

/** Why a message is refused. */
type Refusal = Extract<Answer, { ok: false }>;

type ConversationHost = Pick<RunHost, "ctx" | "sql" | "row" | "event" | "wakeSoon">;

export class RunConversation {
  constructor(
    private readonly host: ConversationHost,
    private readonly parts: { journal: LoggedJournalStore; pinned: RunCatalog },
  ) {}

  /** Records `text` as the conversation's next message and wakes the run to answer it. */
  async send(text: unknown): Promise<Answer<{ status: RunStatusName; message: number }>> {
    const run = this.host.row();
    if (!run) return { ok: false, status: 404, error: "unknown run" };
    const refused = this.refusal(run.status, run.worker) ?? textProblem(text);
    if (refused) return refused;
    const n = this.sent(run.worker) + 2;
    if (n - 1 > MAX_MESSAGES) return { ok: false, status: 409, error: `the run took ${MAX_MESSAGES} messages, its most; start a new run` };
    const bytes = this.host.sql.one<CountRow>`SELECT coalesce(sum(length(CAST(value AS BLOB))), 0) AS n FROM journal`!.n;
    if (bytes > MAX_HISTORY_BYTES) return { ok: false, status: 413, error: `the run's history is ${bytes} bytes, over ${MAX_HISTORY_BYTES}: start a new run` };
    const message: RecordedMessage = { text: text as string, at: Date.now() };
    this.host.ctx.storage.transactionSync(() => {
      this.parts.journal.put(messageKey(run.worker, n), message);
      this.host.event("run_running", { message: n });
    });
    await this.host.wakeSoon();
    return { ok: true, status: "running", message: n };
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

  /** Why the run cannot take a message now: it has not ended (one message at a time), did not succeed, or its root is code. */
  private refusal(status: RunStatusName, worker: string): Refusal | undefined {
    if (!TERMINAL.includes(status)) return { ok: false, status: 409, error: `the run is ${status}: send the next message once it has answered` };
    if (status !== "succeeded")
      return { ok: false, status: 409, error: `the run ${status === "cancelled" ? "was cancelled" : "failed"}; only a run that succeeded continues` };
    const defs = this.parts.pinned.definitions(worker);
    const root = defs instanceof Error ? undefined : defs.catalog.get(worker);
    if (!root) return { ok: false, status: 409, error: `the run's worker "${worker}" is not in its catalog any more` };
    if (root.code) return { ok: false, status: 409, error: `the run's root "${worker}" is a code function: only an LLM worker takes messages` };
    return undefined;
  }

  /** Messages taken after the input. */
  private sent(worker: string): number {
    return this.host.sql.one<CountRow>`SELECT count(*) AS n FROM journal WHERE key LIKE ${`${worker}/message:%`}`!.n;
  }
}

function textProblem(text: unknown): Refusal | undefined {
  if (typeof text !== "string" || !text.trim()) return { ok: false, status: 400, error: "text: a message needs some text" };
  if (text.length > MAX_MESSAGE_CHARS) return { ok: false, status: 413, error: `text: ${text.length} characters, over ${MAX_MESSAGE_CHARS}` };
  return undefined;
}

const answerText = (output: unknown) => (typeof output === "string" ? output : JSON.stringify(output));

/** The run's input as its first message: the default input's string, else JSON. */
function inputText(value: unknown): string {
  if (typeof value === "string") return value;
  const input = value as { input?: unknown } | null;
  if (input && typeof input.input === "string" && Object.keys(input).length === 1) return input.input;
  return JSON.stringify(value);
}
