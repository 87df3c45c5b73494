import { withAttachmentsParameter } from "./attachments/parameter";
import type { CallFrame } from "./call-frame";
import type { CatalogWorker } from "./catalog";
import type { JSONSchema } from "./json-schema";
import type { AttachmentPart } from "./model/model";
import type { ToolDef } from "./toolsets/toolset";
import type { WorkerSpec } from "./worker-file";
import type { UsageMeter } from "./usage";

/**
 * Anything a worker can call by name — an LLM worker, a code function, (later) a
 * worker the run created — in one shape, so replacing one with another changes no
 * caller. The engine reaches every one through `RunServices.callables`.
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
  readonly attachments?: WorkerSpec["attachments"];
  /** Runs it one level below `at.parent`; its own input check, depth check and journal steps included. */
  call(input: unknown, at: CallSite): Promise<unknown>;
}

/** Where a call happens: its journal path, its caller's frame (none for a run's root), the meter it adds to. */
export interface CallSite {
  path: string;
  parent?: CallFrame;
  usage: UsageMeter;
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

/**
 * How a callable appears as a tool to a worker that lists it: exactly what the calling
 * model is offered (an `attachments` parameter for a worker that takes them), and what
 * `GET /workers` shows.
 */
export function callableTool(c: Pick<Callable, "name" | "description" | "input" | "attachments">): ToolDef {
  const def: ToolDef = {
    name: c.name,
    description: c.description,
    parameters: c.input,
    readOnly: false,
    // The callee's own tools do the gating; `approval: {callee: ask}` overrides this.
    approval: () => "allow",
  };
  return withAttachmentsParameter(def, c);
}
