import { MAX_MESSAGE_CHARS } from "../../engine/run/conversation";

/**
 * A delivery's input as a message to the key's run (`on_busy: message`): an input of one
 * string field is that string, anything else its JSON. At most MAX_MESSAGE_CHARS: a
 * longer one is refused when it arrives (413), whichever way it would go.
 */
export function messageText(input: unknown): string {
  if (typeof input === "string") return input;
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const values = Object.values(input);
    if (values.length === 1 && typeof values[0] === "string") return values[0];
  }
  return JSON.stringify(input);
}

export const messageTooLong = (input: unknown): string | undefined => {
  const n = messageText(input).length;
  return n > MAX_MESSAGE_CHARS ? `the delivery's input as a message is ${n} characters, over ${MAX_MESSAGE_CHARS} (on_busy: message)` : undefined;
};
