/** RFC 6901: `/issue/title`, `/labels/0/name`; `~1` is `/`, `~0` is `~`. Undefined when absent. */
export function resolvePointer(doc: unknown, pointer: string): unknown {
  if (pointer === "") return doc;
  let cur: unknown = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

export const POINTER = /^(\/([^~/]|~[01])*)*$/;
