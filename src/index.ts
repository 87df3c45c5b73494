import { consumeModelRequests } from "../durable-objects/model-consumer";
import { handleApprovalReply, isApprovalReply } from "./email/reply-approval";
import { app } from "./http/app";
import { receiveEmail } from "./triggers/inbound-email";
import { startScheduled } from "./triggers/scheduled";

export { RunDO } from "../durable-objects/run";
export { GlobalToolsetsDO } from "../durable-objects/global-toolsets";
export { DeliveryLedgerDO } from "../durable-objects/delivery-ledger";
export { RunIndexDO } from "../durable-objects/run-index";
export { EndedSessionDO } from "../durable-objects/ended-session";

export default {
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
  // MODEL_DISPATCH=queue: model requests handed off by runs (durable-objects/model-consumer.ts).
  async queue(batch, env) {
    await consumeModelRequests(batch, env);
  },
} satisfies ExportedHandler<Env>;
