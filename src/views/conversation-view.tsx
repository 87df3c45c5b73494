import type { ConversationMessage } from "../runs/types";
import { isoTime } from "./format";

/** Characters of one message the page shows: an answer may be long, the page stays readable. */
const SHOWN_CHARS = 4000;

/** A run's conversation (POST /runs/:id/messages): each message and answer in order, who and when. */
export function ConversationView(props: { messages: ConversationMessage[] }) {
  return (
    <ol class="conversation">
      {props.messages.map((m) => (
        <li class={m.role}>
          <strong>{m.role === "user" ? "Message" : "Answer"}</strong> {isoTime(m.at)}
          <pre>{m.text.length > SHOWN_CHARS ? `${m.text.slice(0, SHOWN_CHARS)}…` : m.text}</pre>
        </li>
      ))}
    </ol>
  );
}
