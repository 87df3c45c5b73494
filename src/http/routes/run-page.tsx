import { Hono } from "hono";
import { runView } from "../../runs";
import { hasApiToken } from "../middleware/api-token";
import { verifyApprovalToken } from "../../tokens/approval-token";
import { Problem } from "../../views/layout";
import { RunPage } from "../../views/run-page";

/**
 * `GET /runs/:id/view`: the run for people. Reachable with an approval link's
 * token for this run (from the approval page), or with the API token.
 */
export const runPage = new Hono<{ Bindings: Env }>();

async function mayView(env: Env, runId: string, token: string | undefined, authorization: string | undefined): Promise<boolean> {
  if (await hasApiToken(env, authorization)) return true;
  if (!token || !env.APPROVAL_SECRET) return false;
  const check = await verifyApprovalToken(token, env.APPROVAL_SECRET);
  return check.ok && check.payload.run === runId;
}

runPage.get("/:id/view", async (c) => {
  const id = c.req.param("id");
  if (!(await mayView(c.env, id, c.req.query("token"), c.req.header("Authorization")))) {
    return c.html(<Problem title="Not allowed" message="Open this page from an approval link, or send the API token." />, 403);
  }
  const run = await runView(c.env, id);
  if (!run) return c.html(<Problem title="No such run" message={`There is no run ${id}.`} />, 404);
  return c.html(<RunPage run={run} />);
});
