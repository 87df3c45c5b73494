import type * as z from "zod";
import type { CallFrame, Callables } from "./callable";
import type { JournalSteps } from "./journal";
import type { Scope, StateKV } from "./state";
import type { ToolDef, Toolset } from "./toolset";
import type { CatalogWorker, WorkerSpec } from "./worker";
import type { Connections } from "./connections";

export interface InstanceInit {
  /** The instance name in the worker file (`src` in `src: {use: files}`). */
  name: string;
  /** State private to this instance, in its scope. */
  state: StateKV;
  /** State shared by every instance in this scope that opens the same namespace. */
  shared(namespace: string): StateKV;
  /**
   * Where the instance's requests take their turn for one of the invocation's six
   * connections: make them with `connectedFetch(init.connections)` (or `whenConnected`,
   * to start a time limit when the request starts), never the global `fetch`.
   */
  connections: Connections;
}

/** A created worker as the journal keeps it: a worker file's fields, and who made it with which instance (run/created-workers.ts). */
export interface CreationRecord {
  frontmatter: Record<string, unknown>;
  instructions: string;
  /** The creator call's journal path: the worker is a tool of that call, from its next turn on. */
  creator: string;
  /** The creator's file, for errors. */
  by: string;
  /** `<creator file>#<instance>`: what `max_workers` counts. */
  grant: string;
}

/** The workers a run created, as a kind that creates them sees them (implemented by `CreatedWorkers`). */
export interface CreatedWorkerLedger {
  add(c: { worker: CatalogWorker; creation: CreationRecord }): void;
  /** How many workers were created under one grant (`<creator file>#<instance>`). */
  countOf(grant: string): number;
}

/** The catalog as a kind sees it: the kinds and the workers by name (a `Catalog`, types/catalog.ts). */
export interface KindCatalog {
  readonly kinds: ToolsetRegistry;
  get(name: string): CatalogWorker | undefined;
}

/**
 * What a kind that acts on the run itself (`framed`, e.g. worker_creation) is given:
 * the call its toolset is built for, and of the run only what such a kind needs —
 * the catalog (kinds, workers), the callables (names taken), the journal (its own
 * steps) and the ledger of created workers.
 */
export interface FramedCall {
  readonly frame: CallFrame;
  readonly catalog: KindCatalog;
  readonly callables: Callables;
  readonly journal: JournalSteps;
  readonly created: CreatedWorkerLedger;
}

/** A registered toolset kind: static tool definitions plus a factory of instances (made with `defineToolset`, toolsets/define.ts). */
export interface ToolsetKind {
  readonly kind: string;
  readonly description: string;
  readonly scope: Scope;
  readonly config: z.ZodType;
  /** The tools every instance exposes, before prefixing or filtering. */
  readonly definitions: ToolDef[];
  /** Tools listed at run time (e.g. by an MCP server): `definitions` is empty; each call's list is journaled. */
  readonly dynamic?: boolean;
  instantiate(id: string, config: unknown, init: InstanceInit): Promise<Toolset>;
  /** Problems of an instance that depend on the rest of its worker file (`field: reason` pairs). */
  checkInstance?(worker: WorkerSpec, instance: string, config: unknown): Array<{ field: string; reason: string }>;
  /** A kind that acts on the run itself (worker_creation): built for each call from the caller's frame, never by `instantiate`. */
  framed?(call: FramedCall, instance: string, config: unknown): Toolset;
}

/** The kinds a catalog knows, by name. */
export type ToolsetRegistry = ReadonlyMap<string, ToolsetKind>;
