/**
 * The consumer Worker of tests/fixtures/mounted (edgework under /agents of its own Hono
 * app) as the `workers-mounted` project runs it: with the test subclasses of the run's
 * object and the run index, as tests/support/test-worker.ts does for the app.
 */
export { default, GlobalToolsetsDO, DeliveryLedgerDO, EndedSessionDO, WaitIndexDO, FlowKeyDO, ScheduleIndexDO } from "../fixtures/mounted/index";
export { TestRunDO as RunDO, TestRunIndexDO as RunIndexDO } from "./test-objects";
export { TestOperationDO as OperationDO } from "./test-operation";
export { TestScheduleDO as ScheduleDO } from "./test-schedule";
