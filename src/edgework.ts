/**
 * The `edgework` package's entry: what a user's Worker imports (docs/api.md). The one
 * module under src/ that may import durable-objects/ (scripts/check-layers.mjs): it is the
 * composition root, handing the user createApp and the Durable Object classes to export.
 */
export { createApp, type AppOptions, type EdgeworkApp } from "../durable-objects/create-app";
export { RunDO } from "../durable-objects/run/run";
export { GlobalToolsetsDO } from "../durable-objects/global-toolsets";
export { DeliveryLedgerDO } from "../durable-objects/delivery-ledger";
export { RunIndexDO } from "../durable-objects/run-index";
export { EndedSessionDO } from "../durable-objects/ended-session";
export { WaitIndexDO } from "../durable-objects/wait-index";
export { FlowKeyDO } from "../durable-objects/flow/flow-key";
export { OperationDO } from "../durable-objects/operation/operation";
export { ScheduleDO } from "../durable-objects/schedule/schedule";
export { ScheduleIndexDO } from "../durable-objects/schedule/listing";
// What a kind or a code function author writes with and sees.
export { defineToolset, tool, type ToolSpec, type ToolsetKindDef } from "./engine/toolsets/define";
export { defineFunction, type FunctionSpec } from "./engine/catalog/functions";
export { ToolError } from "./engine/errors";
export type { AgentOptions, ToolContext } from "./engine/types/context";
export type { Decider, DeciderPolicy, HumanAnswer, HumanQuestion } from "./engine/types/deciders";
export type { EventWaitResult } from "./engine/types/wait";
export type { CodeFunction } from "./engine/types/worker";
export type { InstanceInit, ToolsetKind } from "./engine/types/kind";
export { connectedFetch, whenConnected } from "./engine/net/connection-slots";
export type { Connections } from "./engine/types/connections";
export type { ApprovalCheck, CallDescription, Policy } from "./engine/types/toolset";
export type { Scope, StateKV } from "./engine/types/state";
