// The Worker: edgework's app over the workers in workers/ (bundled by `edgework build`).
import { createApp } from "edgework";
import { files } from "./edgework.generated";

export default createApp({ files });
// The Durable Object classes wrangler.toml binds.
export { DeliveryLedgerDO, EndedSessionDO, GlobalToolsetsDO, RunDO, RunIndexDO } from "edgework";
