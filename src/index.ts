import { handleApprovalReply, isApprovalReply } from "./email/reply-approval";
import { app } from "./http/app";

export { RunDO } from "../durable-objects/run";
export { GlobalToolsetsDO } from "../durable-objects/global-toolsets";

export default {
  fetch: app.fetch,
  async email(message, env, ctx) {
    if (isApprovalReply(message, env)) return handleApprovalReply(message, env, ctx);
    message.setReject("no mailbox here");
  },
} satisfies ExportedHandler<Env>;
