// The Worker: edgework's app over the catalog `edgework build` bundles from workers/
// (and the names of wrangler.toml's [vars], the only values a run may show).
import { createApp } from "edgework";
import { files, wranglerVars } from "./edgework.generated";

export default createApp({ files, wranglerVars });
// The Durable Object classes wrangler.toml binds.
export { DeliveryLedgerDO, EndedSessionDO, GlobalToolsetsDO, RunDO, RunIndexDO, WaitIndexDO } from "edgework";
