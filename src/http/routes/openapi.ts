import type { Context } from "hono";
import { openApiDocument } from "../../api/openapi";
import { EDGEWORK_VERSION } from "../../version";
import { basePath } from "../base-path";

let made: { server: string; text: string } | undefined;

/**
 * `GET /openapi.json`: the whole API as an OpenAPI 3.1 document (src/api/openapi.ts), its server
 * the app's URL (this origin, under the base path). Public and cacheable: it is made from the
 * route table alone (no secret, variable or catalog) and takes no input.
 */
export function openapi(c: Context): Response {
  const server = new URL(c.req.url).origin + basePath();
  if (made?.server !== server) made = { server, text: JSON.stringify(openApiDocument(EDGEWORK_VERSION, basePath(), server)) };
  return c.body(made.text, 200, { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=300" });
}
