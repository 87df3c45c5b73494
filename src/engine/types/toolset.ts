import type { ToolContext } from "./context";
import type { JSONSchema } from "./json-schema";

export type Policy = "allow" | "ask" | "deny";

/** A tool as a toolset exposes it: what the model sees, plus its approval default. */
export interface ToolDef {
  name: string;
  description: string;
  parameters: JSONSchema;
  /** Changes nothing outside itself; kept by the `readonly` instance option. */
  readOnly: boolean;
  /** The kind's default policy for these arguments; a worker's `approval:` overrides it. */
  approval(args: unknown): Policy;
  /** The call as a person reads it (approval pages, the inbox); undefined when the arguments are not valid. */
  describe?(args: unknown): CallDescription | undefined;
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
