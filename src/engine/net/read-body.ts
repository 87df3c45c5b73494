export interface CappedBody {
  /** At most `maxBytes` bytes of the body. */
  bytes: Uint8Array;
  /** The body had more than `maxBytes`; the rest was never read. */
  truncated: boolean;
}

/**
 * Reads a response body as a stream up to `maxBytes`, then cancels the stream, so
 * an endless or huge upstream response costs at most `maxBytes` plus one chunk.
 */
export async function readBodyCapped(res: Response, maxBytes: number): Promise<CappedBody> {
  if (!res.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total <= maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    if (total > maxBytes) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(Math.min(total, maxBytes));
  let at = 0;
  for (const c of chunks) {
    if (at >= bytes.length) break;
    const part = c.subarray(0, bytes.length - at);
    bytes.set(part, at);
    at += part.byteLength;
  }
  return { bytes, truncated: total > maxBytes };
}

/** UTF-8 text of capped bytes, without a broken character where the cap cut one. */
export const cappedText = (body: CappedBody) => new TextDecoder().decode(body.bytes, { stream: body.truncated });
