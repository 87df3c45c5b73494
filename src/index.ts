import { app } from "./http/app";

export { RunDO } from "../durable-objects/run";
export { GlobalToolsetsDO } from "../durable-objects/global-toolsets";
export { RunIndexDO } from "../durable-objects/run-index";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
