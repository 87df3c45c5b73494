// Secrets and optional vars (set with `wrangler secret put` or .dev.vars), beside
// what `wrangler types` generates from wrangler.toml.
declare namespace Cloudflare {
  interface Env {
    API_TOKEN?: string;
    OPENAI_API_KEY?: string;
    OPENAI_BASE_URL?: string;
    /** JSON: {"openai:<model>": {"input": usd_per_mtok, "output": usd_per_mtok}} */
    MODEL_PRICES?: string;
    /** Default 7 days. */
    APPROVAL_TTL_SECONDS?: string;
    /** Days a finished run keeps its storage before it deletes itself; default 30. */
    RUN_RETENTION_DAYS?: string;
    /** Wall time one alarm activation may run before it checkpoints; default 5 minutes. */
    ACTIVATION_BUDGET_MS?: string;
    /** Sender of approval emails (an address on a domain set up for Email Routing). */
    APPROVAL_FROM?: string;
    /** Recipient when the worker names no approval.notify. */
    APPROVER_EMAIL?: string;
    /** HMAC key of approval links (secret). */
    APPROVAL_SECRET?: string;
    /** Domain whose Email Routing sends every address to this Worker: approval emails then carry a Reply-To there, and a reply decides. */
    APPROVAL_REPLY_DOMAIN?: string;
    /**
     * "true": local dev and tests apply what production enforces and local workerd does not
     * (src/email/strict-local.ts; docs/operate.md, "Local dev as strict as production").
     * Set by `npm run dev` and the test pool; never set it in production.
     */
    STRICT_LOCAL?: string;
    /** STRICT_LOCAL: whom mail may go to (comma- or space-separated: addresses, `*@domain`, `*` for any), as the account's verified destination addresses. */
    EMAIL_ALLOWED_RECIPIENTS?: string;
    /** Base URL of the app, for links in emails, e.g. https://edgework.example.com */
    PUBLIC_URL?: string;
    /** How long a call to /mcp waits for its run before answering with the run's id and status; default 60. */
    MCP_WAIT_SECONDS?: string;
    /** How long one SSE response of GET /runs/:id/events stays open, in ms; default 60 000. */
    SSE_MAX_MS?: string;
    /** How long GET /runs/:id/events stays silent before a `: heartbeat` comment, in ms; default 15 000. */
    SSE_HEARTBEAT_MS?: string;
    /** HMAC key of page sessions and CSRF tokens (secret); APPROVAL_SECRET when unset. */
    SESSION_SECRET?: string;
    /** How long a page session lasts, in seconds; default 12 hours. */
    SESSION_TTL_SECONDS?: string;
    /** Cloudflare Access: the team domain (`myteam` or `myteam.cloudflareaccess.com`); with ACCESS_AUD, Access JWTs open the pages. */
    ACCESS_TEAM_DOMAIN?: string;
    /** Cloudflare Access: the application's Audience (AUD) tag. */
    ACCESS_AUD?: string;
    /** Where runs make model requests: "queue" (default, durable-objects/engine-config.ts) or "direct". */
    MODEL_DISPATCH?: string;
    /** MODEL_DISPATCH=queue: how long a run waits for a handed-off model request's answer before sending it again, in ms; default 11 minutes. */
    MODEL_DISPATCH_TIMEOUT_MS?: string;
    /** MODEL_DISPATCH=queue: ms between two forwards of the model's text to an open run page (default 200; 0: no live text). */
    MODEL_DELTA_INTERVAL_MS?: string;
    /** Names of wrangler.toml [vars] whose values are redacted like secrets' (comma- or space-separated). */
    SECRET_VARS?: string;
    /** HMAC key of completion webhooks (secret): `Edgework-Signature` (docs/triggers.md, "Completion webhooks"); without it none is sent. */
    NOTIFY_SECRET?: string;
    /** The app's completion webhook: every run's end is posted there (and its pauses, with NOTIFY_ON). */
    NOTIFY_URL?: string;
    /** Slack (docs/guide.md, "Slack"): the bot token (secret) approvals and questions are posted with. */
    SLACK_BOT_TOKEN?: string;
    /** Slack's signing secret (secret): every request to /slack/* must carry its v0 signature. */
    SLACK_SIGNING_SECRET?: string;
    /** Slack's Web API base, an operator var; default https://slack.com/api (tests point it at a fake on 127.0.0.1). */
    SLACK_API_BASE?: string;
    /** Slack's workspace id (T…), an operator var: when set, a press by a user of another workspace decides nothing. */
    SLACK_TEAM_ID?: string;
    /** When NOTIFY_URL hears: `ended` (default), `paused`, comma- or space-separated. */
    NOTIFY_ON?: string;
    /** The only hosts a completion webhook may go to (`host`, `host:port`, `*.domain`), then over https or http; unset: any public https host on 443. */
    NOTIFY_ALLOW_HOSTS?: string;
    /** How long one completion webhook attempt waits for its answer, in ms; default 10 000. */
    NOTIFY_TIMEOUT_MS?: string;
  }
}
