import { messageKey } from "../journal/keys";
import type { JournalSteps } from "../types/journal";

/** Characters of one message after the input (the host refuses a longer one; an emailed reply is cut to it). */
export const MAX_MESSAGE_CHARS = 16_000;

/** A user message that continues a finished run's conversation, as its host records it (`messageKey`). */
export interface RecordedMessage {
  text: string;
  /** When it was received (ms). */
  at: number;
}

/**
 * The conversation's `n`-th user message to the root worker at `root`, once the host
 * recorded it; undefined while there is none. Read after each final answer: a recorded
 * message continues the loop, so a replay meets every earlier message where it came.
 */
export function recordedMessage(journal: Pick<JournalSteps, "get">, root: string, n: number): string | undefined {
  const m = journal.get<RecordedMessage>(messageKey(root, n));
  return typeof m?.text === "string" ? m.text : undefined;
}
