import type { Context } from "hono";
import type { z } from "zod";
import { httpError, issueList } from "./http-error";

/** Parses the JSON body against a schema: 400 with what is wrong for bad JSON or a bad shape. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let raw: unknown;
  let proto = false;
  try {
    // A `__proto__` key is dropped by zod's records (a filter's attribute criterion would vanish, widening
    // what a bulk operation acts on): a body that has one anywhere is refused instead.
    raw = JSON.parse(await c.req.text(), (key, value) => {
      if (key === "__proto__") proto = true;
      return value;
    });
  } catch {
    throw httpError(400, { error: "the request body is not valid JSON" });
  }
  if (proto) throw httpError(400, { error: "invalid request body: a key may not be __proto__" });
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw httpError(400, { error: "invalid request body", issues: issueList(parsed.error) });
  return parsed.data;
}
