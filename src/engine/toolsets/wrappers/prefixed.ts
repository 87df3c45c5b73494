import type { Toolset } from "../../types/toolset";

/** Exposes `read_file` as `src_read_file`; strips the prefix again when called. */
export function prefixed(inner: Toolset, prefix: string): Toolset {
  const head = `${prefix}_`;
  return {
    id: inner.id,
    async listTools() {
      return (await inner.listTools()).map((t) => ({ ...t, name: head + t.name }));
    },
    callTool: (name, args, ctx) => inner.callTool(name.startsWith(head) ? name.slice(head.length) : name, args, ctx),
    close: inner.close && (() => inner.close!()),
  };
}
