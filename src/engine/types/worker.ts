import type * as z from "zod";
import type { Budget } from "./budget";
import type { DeciderPolicy } from "./deciders";
import type { ToolContext } from "./context";
import type { JSONSchema } from "./json-schema";
import type { Scope } from "./state";
import type { ToolPolicy } from "./arg-rules";
import type { ApprovalCheck } from "./toolset";
import type { RetryConfig } from "./retry";
import type { CompensateConfig } from "./compensate";

/** One toolset instance of a worker file: `{use: <kind>, scope?, readonly?, ...kind config}`. */
export interface InstanceSpec {
  use: string;
  scope?: Scope;
  readonly?: boolean;
  /** How its tools' transient failures are tried again (toolsets/retry-config.ts); absent: never. */
  retry?: RetryConfig;
  /** What undoes each of its tools' effects when the run fails (toolsets/compensate-config.ts); absent: nothing. */
  compensate?: CompensateConfig;
  /** Kind config (everything but use/scope/readonly/retry/compensate), validated by the kind's schema. */
  config: Record<string, unknown>;
}

/** What files a worker accepts from its callers, with each call (`attachments:`, catalog/worker-file.ts). */
export interface AttachmentPolicy {
  max_files: number;
  max_bytes: number;
  types: string[];
}

export interface FollowUp {
  remindAfterMs?: number;
  escalateAfterMs?: number;
  escalateTo?: string[];
}

/** A parsed worker file. Cross-file checks (kinds, workers:, tool names) are the catalog's. */
export interface WorkerSpec {
  file: string;
  name: string;
  description?: string;
  model?: string;
  compatibleModels?: string[];
  input: JSONSchema;
  output?: JSONSchema;
  maxTurns: number;
  toolsets: Record<string, InstanceSpec>;
  /** Names or globs from `toolsets.workers`. */
  workers: string[];
  /** `toolsets.workers: {names, run: child}`: each call of one of them runs as a child run (its own run and object). */
  workersRun?: "child";
  /** Exposed tool name → its policy, or rules on the arguments that choose one. */
  approval: Record<string, ToolPolicy>;
  /** Exposed tool name → who may decide its approvals (`{ask: [...], allow_initiator}` in `approval:`). */
  deciders?: Record<string, DeciderPolicy>;
  notify?: string;
  /** The Slack channel (`#ops`) or conversation/user id its approvals and questions are also posted to. */
  slack?: string;
  /** Follow-ups of an approval nobody decided (ms after it was asked). */
  followUp?: FollowUp;
  budget?: Budget;
  attachments?: AttachmentPolicy;
  /** How its history is kept within the model's context (`context:`); absent: `DEFAULT_CONTEXT` (run/compaction.ts). */
  context?: ContextPolicy;
  instructions: string;
}

/**
 * `context:` of a worker file: when the history its model would be sent is estimated over
 * `maxTokens`, an older stretch (after the first user message, before the last `keepLast`
 * messages) is summarized by `model` (`summarize`; default the worker's) or dropped (`window`).
 */
export interface ContextPolicy {
  maxTokens: number;
  compact: "summarize" | "window";
  model?: string;
  keepLast: number;
}

/** A TypeScript function registered in the catalog beside the `.worker` files, called exactly like a worker (catalog/functions.ts). */
export interface CodeFunction {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output?: z.ZodType;
  readonly toolsets?: Record<string, unknown>;
  readonly approval?: Record<string, unknown>;
  /** Whether a call of this function asks its caller's approver first (given its input as `input` parsed it); see `FunctionSpec`. */
  needsApproval?(input: unknown, check: ApprovalCheck): boolean | Promise<boolean>;
  run(input: unknown, ctx: ToolContext): unknown;
}

/** A worker or code function as the catalog accepted it: `workers:` globs resolved to names. */
export interface CatalogWorker extends WorkerSpec {
  workerTools: string[];
  /** Set for a code function: its body instead of instructions for a model. */
  code?: CodeFunction;
}
