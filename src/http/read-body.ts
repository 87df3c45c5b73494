import { httpError } from "./http-error";

/** The most any request body may be: webhooks, the API, the approval form. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a request body up to `limit` bytes; a larger one is refused with 413 before it is all read. */
export async function readLimited(req: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  const tooLarge = () => httpError(413, { error: `the body is larger than ${limit} bytes` });
  if (declared > limit) throw tooLarge();
  if (!req.body) return new Uint8Array();
  const body = await readBounded(req.body, limit);
  if (!body) throw tooLarge();
  return body;
}

/** Reads a stream up to `limit` bytes; past that it is cancelled, unread, and the answer is null. */
export async function readBounded(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) body.set(c, (at += c.length) - c.length);
  return body;
}
