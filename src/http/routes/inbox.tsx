import { Hono } from "hono/tiny";
import { inboxQuery } from "../../api/runs";
import { runIndex } from "../../runs";
import type { PendingApprovalItem } from "../../runs/index-types";
import { runView } from "../../runs";
import { signApprovalToken } from "../../tokens/approval-token";
import { InboxPage, type InboxApproval, type RecentDecision } from "../../views/inbox-page";
import { Problem } from "../../views/layout";
import { describeApproval } from "../describe-approval";
import { gatherAttributes, queryPath } from "../../runs/filter-schema";
import { issueList } from "../http-error";
import { peopleAuth, type PeopleEnv, type Person } from "../middleware/people-auth";
import { appPath } from "../base-path";

/** Runs whose pending approvals the inbox opens to show their calls; the rest are listed by tool only. */
const MAX_RUNS_DESCRIBED = 25;
const RECENT_RUNS = 50;
/** The newest runs listed whose decisions the inbox shows (one read of each run), and how many decisions at most. */
const RUNS_WITH_DECISIONS = 10;
const RECENT_DECISIONS = 20;

/**
 * An empty form field means "any". The form's `attribute` field (`name=value`) is one more
 * `attr.<name>` criterion, as the attribute links of the listing and the run page give them.
 */
function given(q: Record<string, string>): Record<string, unknown> {
  const { attribute, ...rest } = Object.fromEntries(Object.entries(q).filter(([, v]) => v !== ""));
  const eq = attribute?.indexOf("=") ?? -1;
  if (attribute !== undefined) rest[`attr.${eq > 0 ? attribute.slice(0, eq) : attribute}`] = eq > 0 ? attribute.slice(eq + 1) : "";
  return gatherAttributes(rest);
}

/** `GET /inbox`: pending approvals and questions first (each call described), `waiting` runs (timers, events, questions), then recent runs, filtered. */
export const inbox = new Hono<PeopleEnv>();

inbox.get("/", peopleAuth(), async (c) => {
  const parsed = inboxQuery.safeParse(given(c.req.query()));
  if (!parsed.success) {
    return c.html(
      <Problem
        title="Bad filter"
        message={issueList(parsed.error)
          .map((i) => `${queryPath(i.path)}: ${i.message}`)
          .join("; ")}
      />,
      400,
    );
  }
  const filter = parsed.data;
  const person = c.get("person");
  const index = runIndex(c.env);
  const [pending, recent, waiting] = await Promise.all([
    index.pendingApprovals(),
    index.listRuns({ ...filter, limit: RECENT_RUNS }),
    index.listRuns({ status: "waiting", limit: MAX_RUNS_DESCRIBED }),
  ]);
  const approvals = await withCalls(c.env, person, pending.approvals);
  const [waits, decided] = await Promise.all([
    Promise.all(waiting.runs.map(async (r) => ({ run: r, waits: (await runView(c.env, r.id))?.waits ?? [] }))),
    recentDecisions(
      c.env,
      recent.runs.slice(0, RUNS_WITH_DECISIONS).map((r) => r.id),
    ),
  ]);
  return c.html(
    <InboxPage
      who={person.who}
      csrf={person.via === "session" ? person.csrf : null}
      approvals={approvals}
      truncated={pending.truncated}
      runs={recent.runs}
      waiting={waits}
      decided={decided}
      filter={filter}
      now={Date.now()}
    />,
  );
});

/** The decisions of these runs (each read once), newest first: the audit of who decided what, how and when. */
async function recentDecisions(env: Env, runIds: string[]): Promise<RecentDecision[]> {
  const views = await Promise.all(runIds.map((id) => runView(env, id)));
  return views
    .flatMap((v) => (v ? v.approvals.filter((a) => a.decided_at !== null && a.status !== "voided").map((approval) => ({ run_id: v.id, approval })) : []))
    .sort((a, b) => b.approval.decided_at! - a.approval.decided_at!)
    .slice(0, RECENT_DECISIONS);
}

/** Whom an inbox link decides as: the person Access names, else the session (the API token, which names no person). */
const inboxSigner = (person: Person) => (person.via === "access" ? { via: "access" as const, to: person.who } : { via: "inbox" as const });

/**
 * Each pending approval with its arguments and description (read from its run,
 * for the first runs only) and a link to decide it: an approval link signed for
 * this person (its POST is protected by that signature), else the run page.
 */
async function withCalls(env: Env, person: Person, pending: PendingApprovalItem[]): Promise<InboxApproval[]> {
  const runIds = [...new Set(pending.map((a) => a.run_id))].slice(0, MAX_RUNS_DESCRIBED);
  const views = new Map(await Promise.all(runIds.map(async (id) => [id, await runView(env, id)] as const)));
  return Promise.all(
    pending.map(async (a) => {
      const view = views.get(a.run_id)?.approvals.find((v) => v.id === a.id);
      const decideLink = env.APPROVAL_SECRET
        ? appPath(`/approvals/${await signApprovalToken({ run: a.run_id, approval: a.id, exp: a.expires_at, ...inboxSigner(person) }, env.APPROVAL_SECRET)}`)
        : appPath(`/runs/${encodeURIComponent(a.run_id)}/view`);
      return {
        ...a,
        decideLink,
        ...(view ? { args: view.args, call: describeApproval(view), emailFailures: view.email_failures, editable: view.editable } : {}),
      };
    }),
  );
}
