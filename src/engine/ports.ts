import type { ToolsetKind } from "./toolsets/define";
import type { Scope, StateKV, Toolset } from "./toolsets/toolset";
import type { InstanceSpec } from "./worker-file";

/**
 * Durable state by scope: `call` (scope id = run id + call path), `run` (run id),
 * `global`. Memory implementation for the engine, SQLite in the Durable Objects.
 */
export interface StateBackend {
  open(scope: Scope, scopeId: string, namespace: string): StateKV;
  /** Deletes a scope's state; with `prefix`, every scope id starting with `scopeId`. */
  clear(scope: Scope, scopeId: string, opts?: { prefix?: boolean }): Promise<void>;
}

/** Where `scope: global` instances live: in-process now, the singleton Durable Object later. */
export interface GlobalToolsets {
  resolve(key: string, name: string, kind: ToolsetKind, spec: InstanceSpec): Promise<Toolset>;
}

export interface Clock {
  now(): number;
}

export interface Logger {
  warn(message: string, data?: Record<string, unknown>): void;
}

export const consoleLogger: Logger = {
  warn: (message, data) => console.warn(message, data ?? ""),
};
