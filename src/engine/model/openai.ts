import OpenAI from "openai";
import type { Model, ModelRequest, ModelResponse } from "./model";

export interface OpenAIOptions {
  apiKey?: string;
  baseURL?: string;
  /** Injected in tests; the platform's fetch otherwise. */
  fetch?: typeof fetch;
  /** Retries with exponential backoff on 408/409/429/5xx and network errors. */
  maxRetries?: number;
  timeoutMs?: number;
}

/** `openai:<model>` through the official client, against any OpenAI-compatible base URL. */
export function openaiModel(model: string, opts: OpenAIOptions): Model {
  const client = new OpenAI({
    apiKey: opts.apiKey || "missing-OPENAI_API_KEY",
    baseURL: opts.baseURL || undefined,
    fetch: opts.fetch,
    maxRetries: opts.maxRetries ?? 3,
    timeout: opts.timeoutMs ?? 60_000,
  });
  return {
    async request(req: ModelRequest): Promise<ModelResponse> {
      const completion = await client.chat.completions.create({
        model,
        messages: req.messages.map(toOpenAI),
        ...(req.tools.length
          ? { tools: req.tools.map((t) => ({ type: "function" as const, function: t })), parallel_tool_calls: true }
          : {}),
        ...(req.output ? { response_format: { type: "json_schema" as const, json_schema: { name: "output", schema: req.output } } } : {}),
      });
      const msg = completion.choices[0]?.message;
      return {
        text: msg?.content ?? null,
        toolCalls: (msg?.tool_calls ?? []).flatMap((c) =>
          c.type === "function" ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
        ),
        usage: { inputTokens: completion.usage?.prompt_tokens ?? 0, outputTokens: completion.usage?.completion_tokens ?? 0 },
      };
    },
  };
}

function toOpenAI(m: ModelRequest["messages"][number]): OpenAI.Chat.ChatCompletionMessageParam {
  switch (m.role) {
    case "assistant":
      return {
        role: "assistant",
        content: m.content,
        ...(m.toolCalls?.length
          ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    default:
      return { role: m.role, content: m.content };
  }
}
