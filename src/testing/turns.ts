/**
 * One answer of a scripted model (the model server, model-server.ts, plays them in
 * order): text, tool calls, or both; or an error response.
 * `chunks` (with `stream: true` requests): the text in pieces; `gate`: only the first
 * piece is sent until `POST /gates/<gate>` opens it; `chunk_delay_ms`: the time between two
 * pieces (a model writing); `delay_ms`: a slow model.
 */
export type ScriptedTurn =
  | {
      text?: string;
      tool_calls?: Array<{ id?: string; name: string; arguments: unknown }>;
      usage?: { prompt_tokens: number; completion_tokens: number };
      chunks?: string[];
      gate?: string;
      chunk_delay_ms?: number;
      delay_ms?: number;
    }
  | { status: number; body?: unknown; headers?: Record<string, string> };

/** The model answers with text (ends its turn). */
export const say = (text: string): ScriptedTurn => ({ text });

/** The model calls one tool (a worker or a toolset's tool) with these arguments. */
export const callTool = (name: string, args: unknown): ScriptedTurn => ({ tool_calls: [{ name, arguments: args }] });
