import { addressParser, type Header } from "postal-mime";

type Sole = { address: string } | { problem: string };

/** What separates addresses and names in a header's text: an address is a token with an "@" between them. */
const SEPARATORS = /[\s<>()[\],;:"\\]+/;

/**
 * The one address a message's From header names (lowercase), or what is wrong with it.
 * postal-mime's `from` is the first address of the first From header, so
 * `From: ann@example.com, mallory@evil.test` would read as Ann: here the message must
 * have one From header naming one mailbox (not a group) and no other address anywhere
 * in it — not in its display name (`"mallory@evil.test" <ann@…>`, `<ann@…> <mallory@…>`)
 * nor in a comment, where another reader may take it for the sender. With `sender`, a
 * Sender header (who actually sent the message, RFC 5322 3.6.2), when there is one, must
 * name that same address: for mail whose From we answer or act on (conversations, approval
 * and question replies), never a message someone else sent in that person's name.
 */
export function soleFrom(headers: readonly Header[], opts: { sender?: boolean } = {}): Sole {
  const from = soleAddress(headers, "from");
  if ("problem" in from || !opts.sender || !headers.some((h) => h.key === "sender")) return from;
  const sender = soleAddress(headers, "sender");
  return "problem" in sender ? sender : sender.address === from.address ? from : { problem: "the Sender header names another address than the From header" };
}

function soleAddress(headers: readonly Header[], key: "from" | "sender"): Sole {
  const header = key === "from" ? "From" : "Sender";
  const lines = headers.filter((h) => h.key === key);
  if (lines.length > 1) return { problem: `the message has ${lines.length} ${header} headers; it may have one` };
  const value = lines[0]?.value ?? "";
  const boxes = addressParser(value);
  if (boxes.length > 1) return { problem: `the ${header} header names more than one address` };
  const box = boxes[0];
  if (box?.group) return { problem: `the ${header} header names a group, not one address` };
  const address = box?.address.trim().toLowerCase();
  if (!box || !address || !looksLikeAddress(address)) return { problem: `the ${header} header names no address` };
  const named = new Set(`${value} ${box.name}`.split(SEPARATORS).flatMap((t) => (looksLikeAddress(t) ? [t.toLowerCase()] : [])));
  if (named.size !== 1 || !named.has(address)) return { problem: `the ${header} header names more than one address` };
  return { address };
}

/** Something before and after an "@" ("Ann @ Work" names nobody). */
const looksLikeAddress = (token: string) => token.indexOf("@") > 0 && token.lastIndexOf("@") < token.length - 1;
