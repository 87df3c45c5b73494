/**
 * A Message-ID as a thread header may carry it: `<left@right>` of printable ASCII
 * without spaces, angle brackets or a second `@`, at most MAX_ID_CHARS. A sender's
 * ids, and the ids the platform gives our sends, are hostile: one that does not fit
 * is left out of In-Reply-To and References (those headers are written as given: a
 * CR or LF would add a header).
 */
const MSG_ID = /^<[\x21-\x3b\x3d\x3f\x41-\x7e]+@[\x21-\x3b\x3d\x3f\x41-\x7e]+>$/;
const MAX_ID_CHARS = 250;

export const isMessageId = (id: unknown): id is string => typeof id === "string" && id.length <= MAX_ID_CHARS && MSG_ID.test(id);

/** The id a send result names (`<id@host>`, or `id@host` without brackets), if it fits a header; else null. */
export function sentMessageId(id: unknown): string | null {
  if (typeof id !== "string") return null;
  const bracketed = id.startsWith("<") ? id : `<${id}>`;
  return isMessageId(bracketed) ? bracketed : null;
}
