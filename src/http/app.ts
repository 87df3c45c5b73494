import type { Context } from "hono";
import { Hono } from "hono/tiny";
import { HTTPException } from "hono/http-exception";
import type * as z from "zod";
import type { appIndex } from "../api/common";
import { CatalogError } from "../engine";
import { apiToken } from "./middleware/api-token";
import { bodyLimit } from "./middleware/body-limit";
import { pageHeaders } from "./middleware/page-headers";
import { approvals } from "./routes/approvals";
import { hooks } from "./routes/hooks";
import { inbox } from "./routes/inbox";
import { login } from "./routes/login";
import { mcp } from "./routes/mcp";
import { lists } from "./routes/lists";
import { runPage } from "./routes/run-page";
import { runs } from "./routes/runs";
import { openapi } from "./routes/openapi";
import { operations } from "./routes/operations";
import { schedules } from "./routes/schedules";
import { slack } from "./routes/slack";
import { slackTrigger } from "./routes/slack-trigger";
import { workers } from "./routes/workers";
import { RUN_LIVE_SCRIPT } from "../views/run-live-script";

// Every Hono of the app is hono/tiny's (one PatternRouter, 2.4 KiB gzip less than the default's three
// routers; a few dozen routes need no faster matching): tests/e2e/bundle.test.ts keeps the others out.
export const app = new Hono<{ Bindings: Env }>();

app.get("/", (c) =>
  c.json({
    name: "edgework",
    docs: "see README.md",
    api: ["/openapi.json", "/runs", "/workers", "/hooks/:trigger", "/operations", "/schedules"],
  } satisfies z.input<typeof appIndex>),
);
// The API's description: public, like the index.
app.get("/openapi.json", openapi);

// Pages for people carry capability tokens in their URLs.
app.use("/approvals/*", pageHeaders());
app.use("/runs/:id/view", pageHeaders({ script: RUN_LIVE_SCRIPT }));
app.use("/runs/:id/view/events", pageHeaders());
// Pages for people signed in (API token, session cookie, Cloudflare Access).
for (const path of ["/login", "/logout", "/inbox"]) app.use(path, pageHeaders(), bodyLimit());

// Every body is bounded before a handler parses it (webhooks bound theirs as they read the raw
// bytes; the API's after the token check, so no stranger makes us read a megabyte).
app.use("/approvals/*", bodyLimit());

// Webhooks prove themselves by signature; pages for people by their signed link (or the API token).
app.route("/hooks", hooks);
// Slack proves itself by its v0 signature, each request bounded as it is read (routes/slack.ts).
app.route("/slack", slack);
app.route("/slack", slackTrigger);
// Listings first: `GET /approvals` (API token) beside the approval links `/approvals/:token`.
app.route("/", lists);
app.route("/approvals", approvals);
app.route("/runs", runPage);
app.route("/", login);
app.route("/inbox", inbox);

app.use("/runs/*", apiToken());
app.use("/runs", apiToken());
app.use("/workers", apiToken());
for (const path of ["/operations", "/operations/*", "/schedules", "/schedules/*"]) app.use(path, apiToken(), bodyLimit());
app.use("/runs/*", bodyLimit());
app.use("/runs", bodyLimit());
app.route("/runs", runs);
app.route("/workers", workers);
app.route("/operations", operations);
app.route("/schedules", schedules);
app.route("/mcp", mcp);

export const notFoundJson = (c: Context) => c.json({ error: `no route ${c.req.method} ${new URL(c.req.url).pathname}` }, 404);
app.notFound(notFoundJson);

app.onError((err, c) => {
  if (err instanceof HTTPException) return err.getResponse();
  if (err instanceof CatalogError) return c.json({ error: "the worker catalog was refused", problems: err.problems.map((p) => p.message) }, 500);
  console.error("unhandled error", c.req.method, new URL(c.req.url).pathname, err instanceof Error ? err.message : String(err));
  return c.json({ error: "internal error" }, 500);
});
