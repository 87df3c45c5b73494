import type { ToolsetKind } from "./kind";
import type { Toolset } from "./toolset";
import type { InstanceSpec } from "./worker";

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
