import type * as z from "zod";
import { ToolError, type ToolFailure } from "../errors";
import { boundContext, SignalBoundary } from "../run/signal-boundary";
import { describeIssues, toolParameters } from "../json-schema";
import type { ToolContext } from "../types/context";
import type { ApprovalCheck, CallDescription, Policy, ToolDef, UndoCall } from "../types/toolset";
import { onParsedInput } from "../approvals/call-policy";
import type { InstanceInit, ToolsetKind, ToolsetRegistry } from "../types/kind";
import type { Scope } from "../types/state";

// biome-ignore lint/suspicious/noExplicitAny: a kind's tools share one `self` type S, whatever it is, until the kind names it.
export interface ToolSpec<I extends z.ZodType = z.ZodType, S = any> {
  description: string;
  input: I;
  /** Changes nothing outside itself. Default approval: read-only tools allow, others ask. */
  readOnly?: boolean;
  approval?: Policy | ((args: z.output<I>) => Policy);
  /**
   * Decides in code whether a call asks, from its arguments (as `input` parsed them):
   * true asks, false allows; a throw, a rejection or anything else asks. Instead of
   * `approval`; a worker's `approval:` entry for the tool still wins. Runs before the
   * call (again on replay, until an ask is recorded): decide from `args` and `check` alone.
   */
  needsApproval?(args: z.output<I>, check: ApprovalCheck): boolean | Promise<boolean>;
  /**
   * The arguments as approval rules (`ask_when`, `deny_when`) read them, given those `input`
   * parsed: the http kind's puts the method a server acts on (a method-override header's) in `method`.
   */
  ruleArgs?(args: z.output<I>): unknown;
  /** How a person reads a call (approval pages, the inbox); the raw arguments stay shown beside it. */
  describe?(args: z.output<I>): CallDescription;
  /** A result of `run` that reports a failure a retry policy may retry (an HTTP 503); undefined for a success. */
  failure?(result: unknown): ToolFailure | undefined;
  /**
   * What undoes this call's effect when the run fails or is cancelled after it (a compensation):
   * another tool of this kind, by its name here, with arguments made from `args` and `result` —
   * the result is the upstream's word: take values from it, not shapes. Undefined: nothing to undo.
   * Called once, after a call that succeeded; what it returns is journaled, and made later like any
   * call (approval-gated). A worker file's `compensate:` for the tool wins over it.
   */
  undo?(args: z.output<I>, result: unknown): UndoCall | undefined;
  run(args: z.output<I>, ctx: ToolContext, self: S): unknown;
}

/** Declares one tool of a kind; exists for type inference of `args`. */
export const tool = <I extends z.ZodType, S = unknown>(spec: ToolSpec<I, S>): ToolSpec<I, S> => spec;

export interface ToolsetKindDef<C extends z.ZodType, S> {
  kind: string;
  description?: string;
  /** Default scope; an instance may override it with `scope:`. */
  scope?: Scope;
  config: C;
  // biome-ignore lint/suspicious/noExplicitAny: each tool has its own input schema; a record of them can only say "some schema".
  tools: Record<string, ToolSpec<any, S>>;
  create(config: z.output<C>, init: InstanceInit): S | Promise<S>;
  close?(self: S): void | Promise<void>;
}

export function defineToolset<C extends z.ZodType, S>(def: ToolsetKindDef<C, S>): ToolsetKind {
  const definitions: ToolDef[] = Object.entries(def.tools).map(([name, spec]) => {
    if (spec.approval !== undefined && spec.needsApproval) throw new Error(`tool "${name}" of kind "${def.kind}": give approval or needsApproval, not both`);
    // With needsApproval, whatever cannot wait for it (an attachment's fetch) reads "ask".
    const approval = spec.approval ?? (spec.readOnly && !spec.needsApproval ? "allow" : "ask");
    return {
      name,
      description: spec.description,
      parameters: toolParameters(spec.input),
      readOnly: spec.readOnly ?? false,
      approval: typeof approval === "function" ? (args) => approval(args) : () => approval,
      ...onParsedInput(spec.input, spec),
      ...(spec.describe ? { describe: describeValid(spec) } : {}),
      ...(spec.failure ? { failure: spec.failure } : {}),
      ...(spec.undo ? { undo: undoOfValid(spec) } : {}),
    };
  });
  return {
    kind: def.kind,
    description: def.description ?? def.kind,
    scope: def.scope ?? "call",
    config: def.config,
    definitions,
    async instantiate(id, config, init) {
      const self = await def.create(config as z.output<C>, init);
      return {
        id,
        listTools: async () => definitions,
        // Not async: the boundary's promise is the call's, without another around it.
        callTool(name, args, ctx) {
          const spec = def.tools[name];
          if (!spec) return Promise.reject(new ToolError(`toolset "${init.name}" has no tool "${name}"`));
          const parsed = spec.input.safeParse(args);
          if (!parsed.success) return Promise.reject(new ToolError(`invalid arguments for ${name}: ${describeIssues(parsed.error)}`));
          // The tool is user code: it never sees an engine signal (see SignalBoundary).
          const boundary = new SignalBoundary();
          return boundary.run(() => spec.run(parsed.data, boundContext(ctx, boundary, { state: init.state }), self));
        },
        close: def.close ? async () => def.close!(self) : undefined,
      };
    },
  };
}

/** A kind's `describe`, given only arguments its input schema accepts (the page shows raw ones otherwise). */
function describeValid(spec: ToolSpec): (args: unknown) => CallDescription | undefined {
  return (args) => {
    const parsed = spec.input.safeParse(args);
    return parsed.success ? spec.describe!(parsed.data) : undefined;
  };
}

/** The tool's `undo` over its arguments as `input` parses them (they did, for the call that made the effect). */
function undoOfValid(spec: ToolSpec): (args: unknown, result: unknown) => UndoCall | undefined {
  return (args, result) => {
    const parsed = spec.input.safeParse(args);
    if (!parsed.success) throw new Error("its arguments no longer parse as the tool's input");
    return spec.undo!(parsed.data, result);
  };
}

export function toolsetRegistry(...kinds: ToolsetKind[]): ToolsetRegistry {
  return new Map(kinds.map((k) => [k.kind, k]));
}
