import type { Context } from "hono";
import { Hono } from "hono/tiny";
import { RUN_ID, runStub, runView } from "../../runs";
import { verifyApprovalToken } from "../../tokens/approval-token";
import { Problem } from "../../views/layout";
import { RunPage } from "../../views/run-page";
import { personOf, type PeopleEnv } from "../middleware/people-auth";
import { runEventStream } from "../run-event-stream";
import { appPath } from "../base-path";

/**
 * `GET /runs/:id/view`: the run for people, and `/runs/:id/view/events`, the event
 * stream its script follows (with the model's text as it streams). Reachable by a
 * signed-in person (API token, session, Access), or with an approval link's token
 * for this run (from the approval page), which the stream URL carries on.
 */
export const runPage = new Hono<PeopleEnv>();

async function mayView(c: Context<PeopleEnv>, runId: string): Promise<boolean> {
  if (await personOf(c)) return true;
  const token = c.req.query("token");
  if (!token || !c.env.APPROVAL_SECRET) return false;
  const check = await verifyApprovalToken(token, c.env.APPROVAL_SECRET);
  return check.ok && check.payload.run === runId;
}

const refused = (c: Context<PeopleEnv>) =>
  c.html(<Problem title="Not allowed" message={`Open this page from an approval link, sign in at ${appPath("/login")}, or send the API token.`} />, 403);

runPage.get("/:id/view", async (c) => {
  const id = c.req.param("id");
  if (!(await mayView(c, id))) return refused(c);
  const run = await runView(c.env, id);
  if (!run) return c.html(<Problem title="No such run" message={`There is no run ${id}.`} />, 404);
  const token = c.req.query("token");
  const events = appPath(`/runs/${encodeURIComponent(id)}/view/events${token ? `?token=${encodeURIComponent(token)}` : ""}`);
  return c.html(<RunPage run={run} events={events} />);
});

runPage.get("/:id/view/events", async (c) => {
  const id = c.req.param("id");
  if (!RUN_ID.test(id) || !(await mayView(c, id))) return refused(c);
  return runEventStream(c, runStub(c.env, id), id, { deltas: true });
});
