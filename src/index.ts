import { handleApprovalReply, isApprovalReply } from "./email/reply-approval";
import { app } from "./http/app";
import { receiveEmail } from "./triggers/inbound-email";
import { startScheduled } from "./triggers/scheduled";

/**
 * The app's handlers that need no Durable Object class: HTTP, Cron Triggers, inbound
 * email. The Worker entry (durable-objects/worker.ts) adds the queue consumer and
 * exports the Durable Object classes.
 */
export const handlers = {
  fetch: app.fetch,
  // Cron Triggers (wrangler.toml [triggers] crons) and Email Routing to this Worker: see workers/triggers.yaml.
  async scheduled(controller, env) {
    await startScheduled(env, controller);
  },
  // Replies to approval emails (APPROVAL_REPLY_DOMAIN) decide approvals; other mail may start an email trigger.
  async email(message, env, ctx) {
    if (isApprovalReply(message, env)) return handleApprovalReply(message, env, ctx);
    await receiveEmail(env, message);
  },
} satisfies ExportedHandler<Env>;
