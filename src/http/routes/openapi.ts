import type { Context } from "hono";
import { openApiDocument } from "../../api/openapi";
import { EDGEWORK_VERSION } from "../../version";
import { basePath } from "../base-path";

let made: { base: string; text: string } | undefined;

/**
 * `GET /openapi.json`: the whole API as an OpenAPI 3.1 document (src/api/openapi.ts). Public and
 * cacheable: it is made from the route table alone (no secret, variable or catalog), once per
 * isolate and mount point, and takes no input.
 */
export function openapi(c: Context): Response {
  const base = basePath();
  if (made?.base !== base) made = { base, text: JSON.stringify(openApiDocument(base, EDGEWORK_VERSION)) };
  return c.body(made.text, 200, { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=300" });
}
