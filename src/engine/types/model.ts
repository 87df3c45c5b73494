import type { JSONSchema } from "./json-schema";

export interface ModelToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model wrote it: it may be invalid, which the loop reports back. */
  arguments: string;
}

/**
 * A file given to a model with the first user message (see src/engine/attachments).
 * The bytes are read only when a request is actually sent: a replay that finds the
 * model's answer recorded never reads them, and they are never journaled.
 */
export interface AttachmentPart {
  type: "attachment";
  /** File name as the model sees it (`report.pdf`). */
  name: string;
  mime: string;
  size: number;
  bytes(): Promise<Uint8Array>;
}

export type ContentPart = { type: "text"; text: string } | AttachmentPart;

export type Message =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
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
  /** The journal key of this request: a model that hands requests elsewhere matches the answer by it. */
  key?: string;
}

export interface ModelResponse {
  text: string | null;
  toolCalls: ModelToolCall[];
  usage: { inputTokens: number; outputTokens: number };
  /** Live text was asked for, but the provider refused to stream (now or earlier in this isolate): the answer came whole, without it. */
  streamRefused?: true;
}

/** One chat-completion style call. Implementations: openai.ts, test-model.ts. */
export interface Model {
  request(req: ModelRequest): Promise<ModelResponse>;
  /**
   * Whether the request under this journal key was already made (handed off, its
   * answer pending or delivered): its budget was checked then, and a replay that
   * waits for or collects the answer must not check it again.
   */
  requested?(key: string): boolean;
}

/** Resolves a `provider:model` string to a model; throws for an unknown provider. */
export type ModelResolver = (name: string) => Model;
