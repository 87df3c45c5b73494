import { ToolError } from "../errors";
import { isTextType } from "../model/content-parts";
import type { GuardedResponse } from "../net/guarded-fetch";
import { readBodyCapped } from "../net/read-body";
import { sha256Hex } from "../ids";
import { writeBytes, writeText } from "../toolsets/kinds/files-disk";
import { essence, typeByName } from "./mime";
import type { FileLocation } from "../types/context";

/**
 * An http response body stored as a file (`fetch` with `save_to`), so that what a
 * webhook points at can become an attachment. Bounded by the http instance's
 * `max_download_bytes` and the files instance's `max_file_bytes`; a body over the
 * bound, or an error status, saves nothing. The result describes the file, never
 * holds its bytes (it is journaled).
 */
export async function saveResponse(res: GuardedResponse, to: FileLocation, maxDownloadBytes: number) {
  if (to.readonly) throw new ToolError(`save_to ${to.path}: files instance "${to.instance}" is readonly`);
  const base = { status: res.status, content_type: res.headers.get("content-type"), final_url: res.finalUrl };
  if (!res.ok) {
    await res.body?.cancel();
    throw new ToolError(`nothing saved to ${to.path}: the server answered ${res.status}`, { failure: { reason: "status", status: res.status } });
  }
  const cap = Math.min(maxDownloadBytes, to.maxFileBytes);
  const body = await readBodyCapped(res, cap);
  if (body.truncated)
    throw new ToolError(
      `nothing saved to ${to.path}: the response is over ${cap} bytes (max_download_bytes ${maxDownloadBytes}, files "${to.instance}" max_file_bytes ${to.maxFileBytes})`,
    );
  const type = essence(base.content_type) ?? typeByName(to.path);
  const bytes = to.cleaned ? to.cleaned(body.bytes, type) : body.bytes;
  // Text stays text, so read_file shows it; anything else is kept as bytes with its type.
  if (isTextType(type)) await writeText(to.disk, to.path, new TextDecoder().decode(bytes));
  else await writeBytes(to.disk, to.path, bytes, type);
  return { ...base, saved: { path: to.ref, type, size: bytes.length, sha256: await sha256Hex(bytes) } };
}
