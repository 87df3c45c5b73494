// This repository's own app, written as a user's src/index.ts is (docs/api.md): the
// catalog `edgework build` bundles from workers/, the code functions, one kind of its own.
import { createApp } from "edgework";
import { files, wranglerVars } from "./edgework.generated";
import { functions } from "./functions/index";
import { toolsets } from "./toolsets/index";

export default createApp({ files, functions, wranglerVars, toolsets });
export { RunDO, GlobalToolsetsDO, DeliveryLedgerDO, RunIndexDO, EndedSessionDO, WaitIndexDO } from "edgework";
