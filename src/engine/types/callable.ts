import type { JSONSchema } from "./json-schema";
import type { ToolDef } from "./toolset";
import type { AttachmentPart } from "./model";
import type { UsageSink } from "./usage";
import type { AttachmentPolicy, CatalogWorker } from "./worker";

/**
 * Anything a worker can call by name — an LLM worker, a code function, a worker the
 * run created — in one shape, so replacing one with another changes no caller. The
 * engine reaches every one through the run's `Callables`.
 */
export interface Callable {
  readonly name: string;
  /** What a calling model reads. */
  readonly description: string;
  /** JSON Schema of its arguments (type: object). */
  readonly input: JSONSchema;
  /** Where it is defined, for errors (`workers/x.worker`, `function "x"`). */
  readonly file: string;
  /** The files it accepts with a call (workers with `attachments:` only). */
  readonly attachments?: AttachmentPolicy;
  /** A function's own say on whether a call asks (`needsApproval`), and its input as rules read it (`ruleArgs`): `ToolDef`'s. */
  readonly approvalHooks?: Pick<ToolDef, "needsApproval" | "ruleArgs">;
  /** Runs it one level below `at.parent`; its own input check, depth check and journal steps included. */
  call(input: unknown, at: CallSite): Promise<unknown>;
}

/** Where a call happens: its journal path, its caller's frame (none for a run's root), the meter it adds to. */
export interface CallSite {
  path: string;
  parent?: CallFrame;
  usage: UsageSink;
  /** A model to use instead of the caller's (`llmAgent`'s `model`). */
  model?: string;
  /** Files the caller attached (a worker that accepts attachments). */
  attachments?: AttachmentPart[];
}

/** The name-resolution seam the loop receives: it imports no toolset kind, no kind imports it. */
export interface Callables {
  /** A worker or function of the catalog, by name. */
  get(name: string): Callable | undefined;
  /** Every name `get` answers, sorted, for "known: …" in errors. */
  names(): string[];
  /** An LLM worker that is in no catalog (`ctx.llmAgent`'s). */
  worker(spec: CatalogWorker): Callable;
}

/** One call of a worker or function in progress (opened by run/call-frame.ts). */
export interface CallFrame {
  /** Its catalog entry: a worker file, a code function (`code` set), or an ad-hoc agent. */
  worker: CatalogWorker;
  path: string;
  depth: number;
  /** Names from the run's root to this call. */
  chain: string[];
  model: string;
  usage: UsageSink;
  /** Files the caller attached; they go with the first user message. */
  attachments?: AttachmentPart[];
}
