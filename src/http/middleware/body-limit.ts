import type { MiddlewareHandler } from "hono";
import { MAX_BODY_BYTES, readLimited } from "../read-body";

/**
 * Bounds the request body before any handler parses it: a larger one (declared
 * or streamed) is refused with 413 and a JSON error, and never read whole.
 */
export function bodyLimit(limit = MAX_BODY_BYTES): MiddlewareHandler {
  return async function bodyLimit(c, next) {
    if (c.req.raw.body) c.req.raw = new Request(c.req.raw, { body: await readLimited(c.req.raw, limit) });
    await next();
  };
}
