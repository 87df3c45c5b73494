/**
 * The Worker as the Workers pool runs it (vitest.config.ts `main`): the app's entry,
 * with the run's object, the run index and the flow key's object replaced by their test
 * subclasses under the class names wrangler.toml binds.
 */
export { default, GlobalToolsetsDO, DeliveryLedgerDO, EndedSessionDO, WaitIndexDO, ScheduleIndexDO } from "../../src/index";
export { TestRunDO as RunDO, TestRunIndexDO as RunIndexDO } from "./test-objects";
export { TestFlowKeyDO as FlowKeyDO } from "./test-flow-key";
export { TestOperationDO as OperationDO } from "./test-operation";
export { TestScheduleDO as ScheduleDO } from "./test-schedule";
