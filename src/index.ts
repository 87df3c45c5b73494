// This repository's own app, written as a user's src/index.ts is (docs/api.md): what
// `edgework build` generates from workers/, src/functions/ and src/toolsets/.
import { createApp } from "edgework";
import { files, functions, toolsets, wranglerVars } from "./edgework.generated";

export default createApp({ files, functions, wranglerVars, toolsets });
export {
  RunDO,
  GlobalToolsetsDO,
  DeliveryLedgerDO,
  RunIndexDO,
  EndedSessionDO,
  WaitIndexDO,
  FlowKeyDO,
  OperationDO,
  ScheduleDO,
  ScheduleIndexDO,
} from "edgework";
