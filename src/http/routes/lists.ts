import { Hono } from "hono/tiny";
import type * as z from "zod";
import { approvalsQuery, type pendingApprovals, type runPage, runsQuery } from "../../api/runs";
import { runIndex } from "../../runs";
import { httpError, issueList } from "../http-error";
import { apiToken } from "../middleware/api-token";
import { gatherAttributes, queryPath } from "../../runs/filter-schema";

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
  return c.json({ runs, next_cursor: next ? `${next.created_at}.${next.id}` : null } satisfies z.input<typeof runPage>);
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
  } satisfies z.input<typeof pendingApprovals>);
});
