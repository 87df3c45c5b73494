import type { JSONSchema } from "../json-schema";

export interface ModelToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model wrote it: it may be invalid, which the loop reports back. */
  arguments: string;
}

export type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; toolCalls?: ModelToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

export interface ModelRequest {
  messages: Message[];
  tools: Array<{ name: string; description: string; parameters: JSONSchema }>;
  /** When set, the final answer must be JSON matching this schema. */
  output?: JSONSchema;
  /**
   * When set, a model that can stream passes its answer's text here piece by piece
   * as it arrives (for people watching); the response is still returned whole.
   */
  onDelta?: (text: string) => void;
}

export interface ModelResponse {
  text: string | null;
  toolCalls: ModelToolCall[];
  usage: { inputTokens: number; outputTokens: number };
}

/** One chat-completion style call. Implementations: openai.ts, test-model.ts. */
export interface Model {
  request(req: ModelRequest): Promise<ModelResponse>;
}

/** Resolves a `provider:model` string to a model; throws for an unknown provider. */
export type ModelResolver = (name: string) => Model;

export const MODEL_NAME = /^([a-z0-9_-]+):(.+)$/;
