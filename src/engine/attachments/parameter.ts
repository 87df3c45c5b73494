import { ToolError } from "../errors";
import type { ToolDef } from "../types/toolset";
import type { WorkerSpec } from "../types/worker";

/** What attachments need of a callee: its name, file and `attachments:` policy. */
export type AttachmentCallee = Pick<WorkerSpec, "name" | "file" | "attachments">;

const MAX_REF_LENGTH = 2048;

/**
 * A worker's tool definition with an `attachments` parameter when the worker accepts
 * them (its file has `attachments:`); others are offered no such parameter.
 */
export function withAttachmentsParameter(def: ToolDef, worker: Pick<AttachmentCallee, "name" | "attachments">): ToolDef {
  const policy = worker.attachments;
  if (!policy) return def;
  const properties = (def.parameters.properties ?? {}) as Record<string, unknown>;
  const attachments = {
    type: "array",
    maxItems: policy.max_files,
    items: { type: "string", minLength: 1, maxLength: MAX_REF_LENGTH },
    description: `Files for ${worker.name} to read (${policy.types.join(", ")}; at most ${policy.max_files} files, ${policy.max_bytes} bytes in all): your files as "<files toolset>:<path>", the path as its read_file takes it (a bare path with one files toolset), or https URLs your http toolset may fetch`,
  };
  return { ...def, parameters: { ...def.parameters, properties: { ...properties, attachments } } };
}

/** The call's arguments without `attachments`, and the references given (none for a worker that takes none). */
export function takeAttachments(worker: AttachmentCallee, args: unknown): { args: unknown; refs: string[] } {
  if (!worker.attachments || typeof args !== "object" || args === null || !("attachments" in args)) return { args, refs: [] };
  const { attachments, ...rest } = args as Record<string, unknown>;
  if (!Array.isArray(attachments) || !attachments.every((r) => typeof r === "string" && r.length > 0 && r.length <= MAX_REF_LENGTH)) {
    throw new ToolError(
      `invalid arguments for ${worker.name}: attachments must be a list of file references or https URLs (each at most ${MAX_REF_LENGTH} characters)`,
    );
  }
  return { args: rest, refs: attachments as string[] };
}
