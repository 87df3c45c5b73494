import { handlers } from "../src/index";
import { consumeModelRequests } from "./model-consumer";

export { RunDO } from "./run/run";
export { GlobalToolsetsDO } from "./global-toolsets";
export { DeliveryLedgerDO } from "./delivery-ledger";
export { RunIndexDO } from "./run-index";
export { EndedSessionDO } from "./ended-session";
export { WaitIndexDO } from "./wait-index";

/** The Worker (wrangler.toml `main`): the app's handlers, the model-request queue's consumer, and the Durable Object classes. */
export default {
  ...handlers,
  // MODEL_DISPATCH=queue: model requests handed off by runs (model-consumer.ts).
  async queue(batch, env) {
    await consumeModelRequests(batch, env);
  },
} satisfies ExportedHandler<Env>;
