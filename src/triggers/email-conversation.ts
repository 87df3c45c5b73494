import type { Email } from "postal-mime";
import { isMessageId } from "../email/answer-mail";
import { replyText } from "../email/reply-text";
import { sha256Hex } from "../engine/ids";
import type { RunRpc } from "../runs";
import type { EmailReply } from "../runs/types";
import { parseConversationMessageId } from "../tokens/conversation-id";
import { MAX_MESSAGE_CHARS } from "../engine/run/conversation";
import { domainOf } from "./email-thread";

/** Only this much of In-Reply-To and of References is looked at, and at most this many ids in it. */
const MAX_HEADER_CHARS = 8 * 1024;
const MAX_IDS = 100;

/** The run object and MAC of one of our answers a reply names (a forged one too: the run checks the MAC). */
export type ThreadReference = { objectId: string; mac: string };

/**
 * The answer of ours a message replies to: the first of our Message-IDs
 * (conversation-id.ts, on the trigger's domain) in In-Reply-To, else the last in
 * References. Ids of other domains or grammars are ignored; null when none is ours.
 */
export function threadReference(parsed: Pick<Email, "inReplyTo" | "references">, triggerAddress: string): ThreadReference | null {
  const domain = domainOf(triggerAddress);
  const ids = (header: string | undefined) =>
    (header ?? "")
      .slice(0, MAX_HEADER_CHARS)
      .match(/<[^<>]*>/g)
      ?.slice(0, MAX_IDS) ?? [];
  const ours = (list: string[]) => list.map((id) => parseConversationMessageId(id, domain)).filter((r) => r !== null);
  return ours(ids(parsed.inReplyTo))[0] ?? ours(ids(parsed.references)).at(-1) ?? null;
}

/**
 * Hands a reply to the run its reference names, which checks the MAC and the sender
 * and takes the text above the quote as the conversation's next message. An
 * object id that is not one of this namespace is refused like a bad MAC: a
 * reference that does not check out never starts a run.
 */
export async function continueConversation(
  env: Env,
  ref: ThreadReference,
  reply: { from: string; to: string; messageId: string | null; deliveryId: string; text: string },
): Promise<{ message: number; duplicate: boolean } | { error: string }> {
  let stub: RunRpc;
  try {
    stub = env.RUNS.get(env.RUNS.idFromString(ref.objectId)) as unknown as RunRpc;
  } catch {
    return { error: NO_CONVERSATION };
  }
  const message: EmailReply = {
    from: reply.from,
    to: reply.to,
    messageId: isMessageId(reply.messageId) ? reply.messageId : null,
    deliveryId: await sha256Hex(reply.deliveryId),
    text: replyText(reply.text, MAX_MESSAGE_CHARS),
  };
  const answer = await stub.continueByEmail(ref.mac, message);
  return answer.ok ? { message: answer.message, duplicate: answer.duplicate === true } : { error: answer.error };
}

/** Why a reply whose reference does not check out is refused: it says no more (no MAC, no object). */
export const NO_CONVERSATION = "this reply names no conversation of ours; write a new message to start one";
