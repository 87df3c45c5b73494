// `edgework/testing`: test your own workers in the Workers vitest pool through the
// app's public HTTP API (docs/testing.md). Start the model server in Node with
// `edgework/testing/model-server`.
export { modelServer, type ModelServer } from "./model-client";
export {
  answerQuestion,
  callTree,
  decideApproval,
  startRun,
  testClient,
  toolCalls,
  waitForStatus,
  waitForWait,
  type AnswerQuestionOptions,
  type AppLike,
  type DecideApprovalOptions,
  type TestClientOptions,
  type WaitForStatusOptions,
} from "./runs";
export { callTool, say, type ScriptedTurn } from "./turns";
