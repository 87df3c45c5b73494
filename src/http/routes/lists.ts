import { Hono } from "hono/tiny";
import * as z from "zod";
import { runIndex } from "../../runs";
import { RUN_STATUSES } from "../../runs/types";
import { httpError, issueList } from "../http-error";
import { apiToken } from "../middleware/api-token";
import { attributeCriteria, gatherAttributes, queryPath, runFilters, since } from "../../runs/filter-schema";

export const MAX_LIMIT = 200;

/** `<created_at>.<id>` of the last run on the page: the keyset the next page starts after. */
const cursor = z
  .string()
  .regex(/^\d{1,16}\.[A-Za-z0-9_-]{1,128}$/, "not a cursor from a previous page's next_cursor")
  .transform((s) => ({ created_at: Number(s.slice(0, s.indexOf("."))), id: s.slice(s.indexOf(".") + 1) }));

const runsQuery = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  ...runFilters,
  since: since.optional(),
  attributes: attributeCriteria.optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  cursor: cursor.optional(),
});

const approvalsQuery = z.strictObject({ status: z.literal("pending", "only status=pending is listed").default("pending") });

function query<S extends z.ZodType>(schema: S, raw: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw httpError(400, { error: "invalid query parameters", issues: issueList(parsed.error).map((i) => ({ ...i, path: queryPath(i.path) })) });
  return parsed.data;
}

/** `GET /runs` and `GET /approvals`: listings from the run index, with the API token. */
export const lists = new Hono<{ Bindings: Env }>();

/** `attr.<name>=<value>` (up to three, the first walked: give the rarest first) with the other filters and paging. */
lists.get("/runs", apiToken(), async (c) => {
  const q = query(runsQuery, gatherAttributes(c.req.query()));
  const { runs, next } = await runIndex(c.env).listRuns({ ...q, after: q.cursor });
  return c.json({ runs, next_cursor: next ? `${next.created_at}.${next.id}` : null });
});

lists.get("/approvals", apiToken(), async (c) => {
  query(approvalsQuery, c.req.query());
  const { approvals, truncated } = await runIndex(c.env).pendingApprovals();
  const now = Date.now();
  return c.json({
    approvals: approvals.map((a) => ({
      run_id: a.run_id,
      worker: a.run_worker,
      approval_id: a.id,
      tool: a.tool,
      worker_chain: a.worker_chain,
      created_at: a.created_at,
      expires_at: a.expires_at,
      age_seconds: Math.max(0, Math.floor((now - a.created_at) / 1000)),
      expires_in_seconds: Math.max(0, Math.floor((a.expires_at - now) / 1000)),
    })),
    truncated,
  });
});
