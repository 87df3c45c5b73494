import type { AttachmentRecord } from "../engine/attachments/resolve";
import type { CallNode } from "../engine/journal/call-tree";
import { within } from "../engine/journal/keys";

/** Attachments by name, type and size: what a person needs to judge, never the bytes. */
export function AttachmentList(props: { attachments: AttachmentRecord[] }) {
  return (
    <ul class="attachments">
      {props.attachments.map((a) => (
        <li>
          📎 <code>{a.name}</code> ({a.type}, {formatBytes(a.size)}) from <code>{a.ref}</code>
        </li>
      ))}
    </ul>
  );
}

export const formatBytes = (n: number) => (n < 1000 ? `${n} B` : n < 1_000_000 ? `${(n / 1000).toFixed(1)} kB` : `${(n / 1_000_000).toFixed(1)} MB`);

/** The attachments given to the workers on the way to `path` (an approval's call path), nearest last. */
export function attachmentsOnPath(root: CallNode | null, path: string): AttachmentRecord[] {
  const found: AttachmentRecord[] = [];
  const visit = (call: CallNode) => {
    for (const tool of call.tools) {
      if (path === tool.path || !within(path, tool.path)) continue;
      if (tool.attachments) found.push(...tool.attachments);
      tool.calls.forEach(visit);
    }
  };
  if (root) visit(root);
  return found;
}
