import { RunError, ToolError } from "../errors";
import { sha256Hex } from "../ids";
import { fileBytes, fileKey, readBytes, type StoredFile } from "../toolsets/kinds/files-disk";
import type { AttachmentCallee } from "./parameter";
import { fetchForAttachment, type RunVars } from "./fetch-url";
import { typeAccepted, typeByName } from "./mime";
import { workerFiles, type RunFiles } from "./worker-files";
import { ATTACHMENTS_STEP } from "../journal/keys";
import type { CallFrame } from "../types/callable";
import type { ToolContext } from "../types/context";
import type { AttachmentPart } from "../types/model";

/**
 * What the journal keeps of one attachment: the reference and what it resolved to,
 * never the bytes. The hash lets a replay that must read the file again prove it
 * is reading the same bytes.
 */
export interface AttachmentRecord {
  ref: string;
  name: string;
  type: string;
  size: number;
  sha256: string;
}

interface Read {
  /** The reference as recorded: a file's canonical `<instance>:<absolute path>`, a URL as given. */
  ref: string;
  bytes: Uint8Array;
  name: string;
  type: string;
}

/** Where a caller's references lead: its run's files, and its run's vars for the `http` instances a URL is fetched through. */
export type AttachmentSources = RunFiles & RunVars;

/**
 * Resolves the references a caller passed to a worker that accepts attachments:
 * count, type and total size checked against the callee's `attachments` before the
 * call, each file read from the caller's own `files` instances or fetched through one
 * of its `http` instances. Returns parts whose bytes are read again only when a model
 * request that is not in the journal needs them.
 */
export async function resolveAttachments(
  run: AttachmentSources,
  caller: CallFrame,
  callee: AttachmentCallee,
  refs: string[],
  ctx: ToolContext,
): Promise<AttachmentPart[]> {
  const policy = callee.attachments;
  if (!policy) throw new ToolError(`${callee.name} takes no attachments (its file ${callee.file} has no attachments: field)`);
  if (refs.length > policy.max_files) {
    throw new ToolError(`${callee.name} takes at most ${policy.max_files} attachments per call (attachments.max_files in ${callee.file}); got ${refs.length}`);
  }
  const read = (ref: string, maxBytes: number): Promise<Read> => readRef(run, caller, callee, ref, maxBytes);
  const fresh = new Map<number, Uint8Array>();
  const records = await ctx.step<AttachmentRecord[]>(ATTACHMENTS_STEP, async () => {
    const out: AttachmentRecord[] = [];
    let total = 0;
    for (const [i, ref] of refs.entries()) {
      const r = await read(ref, policy.max_bytes - total);
      if (!typeAccepted(r.type, policy.types)) {
        throw new ToolError(`attachment "${ref}" is ${r.type}; ${callee.name} accepts ${policy.types.join(", ")} (attachments.types in ${callee.file})`);
      }
      total += r.bytes.length;
      fresh.set(i, r.bytes);
      out.push({ ref: r.ref, name: r.name, type: r.type, size: r.bytes.length, sha256: await sha256Hex(r.bytes) });
    }
    return out;
  });
  return records.map((rec, i) => ({
    type: "attachment",
    name: rec.name,
    mime: rec.type,
    size: rec.size,
    async bytes() {
      const known = fresh.get(i);
      if (known) return known;
      // A replay whose model request is not recorded: the same bytes, or a clear stop.
      // Bounded by the policy, not the recorded size: a fetched text is recorded redacted, and its raw bytes may be longer.
      const again = (await read(rec.ref, policy.max_bytes)).bytes;
      if (again.length !== rec.size || (await sha256Hex(again)) !== rec.sha256) {
        // Fatal: no retry or hand-off can bring the recorded bytes back.
        throw new RunError(
          "attachment_changed",
          `attachment "${rec.ref}" changed since it was given to ${callee.name} (sha256 ${rec.sha256.slice(0, 12)}…, ${rec.size} bytes); the run cannot resume with different content`,
          true,
        );
      }
      fresh.set(i, again);
      return again;
    },
  }));
}

/** One reference, read with at most `maxBytes` (what is left of the callee's `max_bytes`). */
async function readRef(run: AttachmentSources, caller: CallFrame, callee: AttachmentCallee, ref: string, maxBytes: number): Promise<Read> {
  const tooBig = (size: number | string) =>
    new ToolError(
      `attachment "${ref}" is ${size} bytes; ${callee.name} takes at most ${callee.attachments!.max_bytes} bytes of attachments per call (attachments.max_bytes in ${callee.file})`,
    );
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) {
    const r = await fetchForAttachment(run, caller, ref, maxBytes);
    if (r.truncated) throw tooBig(`over ${maxBytes}`);
    return { ...r, ref };
  }
  const at = workerFiles(run, caller).locate(ref);
  const stored = await at.disk.get<StoredFile>(fileKey(at.path));
  if (stored === undefined) throw new ToolError(`attachment "${ref}": no file at ${at.path} in files instance "${at.instance}"`);
  // The size is known before the bytes are read: a file over the bound is never loaded.
  const size = fileBytes(stored);
  if (size > maxBytes) throw tooBig(size);
  const file = (await readBytes(at.disk, at.path))!;
  return { ref: at.ref, bytes: file.bytes, name: at.path.slice(at.path.lastIndexOf("/") + 1), type: file.type ?? typeByName(at.path) };
}
