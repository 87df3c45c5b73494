import { app } from "./http/app";

export { RunDO } from "../durable-objects/run";
export { GlobalToolsetsDO } from "../durable-objects/global-toolsets";
export { DeliveryLedgerDO } from "../durable-objects/delivery-ledger";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
