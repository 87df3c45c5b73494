// The Worker: edgework's app over what `edgework build` generates from workers/ (the
// catalog), wrangler.toml's [vars] (the only values a run may show) and, once you add
// them, src/functions/index.ts and src/toolsets/index.ts.
import { createApp } from "edgework";
import { files, functions, toolsets, wranglerVars } from "./edgework.generated";

export default createApp({ files, functions, toolsets, wranglerVars });
// The Durable Object classes wrangler.toml binds.
export {
  DeliveryLedgerDO,
  EndedSessionDO,
  FlowKeyDO,
  GlobalToolsetsDO,
  OperationDO,
  RunDO,
  RunIndexDO,
  ScheduleDO,
  ScheduleIndexDO,
  WaitIndexDO,
} from "edgework";
