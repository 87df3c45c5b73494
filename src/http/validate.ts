import type { Context } from "hono";
import type { z } from "zod";
import { httpError, issueList } from "./http-error";

/** Parses the JSON body against a schema: 400 with what is wrong for bad JSON or a bad shape. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw httpError(400, { error: "the request body is not valid JSON" });
  }
  // A `__proto__` key is dropped by zod's records (a filter's attribute criterion would vanish, widening
  // what a bulk operation acts on): a body that has one anywhere is refused instead.
  if (hasProtoKey(raw)) throw httpError(400, { error: "invalid request body: a key may not be __proto__" });
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw httpError(400, { error: "invalid request body", issues: issueList(parsed.error) });
  return parsed.data;
}

/** Whether any object in `root` has an own `__proto__` key; iterative, so any depth JSON.parse took is fine. */
function hasProtoKey(root: unknown): boolean {
  const stack = [root];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (!Array.isArray(v) && Object.hasOwn(v, "__proto__")) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === "object") stack.push(x);
  }
  return false;
}
