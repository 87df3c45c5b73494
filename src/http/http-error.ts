import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

/** The one error type routes throw: a status and a JSON body saying what is wrong. */
export function httpError(status: ContentfulStatusCode, body: { error: string } & Record<string, unknown>, headers?: Record<string, string>): HTTPException {
  return new HTTPException(status, { res: Response.json(body, { status, headers }) });
}

/** zod issues as `{path, message}` rows for a 400 body. */
export const issueList = (error: z.ZodError) => error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(root)", message: i.message }));
