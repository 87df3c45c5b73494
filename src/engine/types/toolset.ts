import type { ToolFailure } from "./retry";
import type { ToolContext } from "./context";
import type { JSONSchema } from "./json-schema";

export type Policy = "allow" | "ask" | "deny";

/**
 * What `needsApproval` is told of a call besides its arguments: where it happens, and
 * nothing to act with. It runs before the call, and again on replay until its "ask"
 * is recorded, so it must decide from these alone.
 */
export interface ApprovalCheck {
  readonly runId: string;
  readonly callPath: string;
  readonly depth: number;
  readonly workerChain: readonly string[];
  /** The tool's name as the worker exposes it (`gh_fetch`). */
  readonly tool: string;
}

/** A tool as a toolset exposes it: what the model sees, plus its approval default. */
export interface ToolDef {
  name: string;
  description: string;
  parameters: JSONSchema;
  /** Changes nothing outside itself; kept by the `readonly` instance option. */
  readOnly: boolean;
  /** The kind's default policy for these arguments; a worker's `approval:` overrides it. */
  approval(args: unknown): Policy;
  /**
   * The tool's own code deciding instead of `approval`: true asks, false allows; a
   * throw, a rejection or anything but a boolean asks. A worker's `approval:` overrides it.
   */
  needsApproval?(args: unknown, check: ApprovalCheck): boolean | Promise<boolean>;
  /** The arguments as approval rules read them (defaults applied, http's effective method); else the arguments as sent. */
  ruleArgs?(args: unknown): unknown;
  /** The call as a person reads it (approval pages, the inbox); undefined when the arguments are not valid. */
  describe?(args: unknown): CallDescription | undefined;
  /**
   * A result that reports a failure (http's 4xx or 5xx) as a retry policy reads it (it retries
   * only timeouts, 5xx and 429); undefined for a success, whose effect a compensation may undo.
   */
  failure?(result: unknown): ToolFailure | undefined;
  /**
   * What undoes a call's effect, in the kind's code (a worker file's `compensate:` for the tool wins):
   * another tool of the kind (its name in the kind) and its arguments; undefined when nothing needs undoing.
   */
  undo?(args: unknown, result: unknown): UndoCall | undefined;
}

/** A call that undoes another's effect: a tool of the same kind, by its name in the kind. */
export interface UndoCall {
  tool: string;
  args: Record<string, unknown>;
}

/** `POST api.github.com/repos/o/r/issues/42/comments`, and the body pretty-printed. */
export interface CallDescription {
  summary: string;
  details?: string;
}

/**
 * The whole toolset contract: list the tools, call one. Prefixing, filtering,
 * approval gating and journaling are wrappers that implement this same interface.
 */
export interface Toolset {
  readonly id: string;
  listTools(): Promise<ToolDef[]>;
  /** Returns the tool's JSON result; throws `ToolError` for a failure the model should see. */
  callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown>;
  close?(): Promise<void>;
}
