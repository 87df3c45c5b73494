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
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw httpError(400, { error: "invalid request body", issues: issueList(parsed.error) });
  return parsed.data;
}
