import * as z from "zod";
import { isTextType, resolveParts } from "./content-parts";
import type { ContentPart, Message, Model, ModelRequest, ModelResponse, ModelToolCall } from "../types/model";

/**
 * The shape of a Workers AI binding (`[ai] binding = "AI"`) this adapter needs;
 * declared here so the engine imports nothing from Cloudflare.
 */
export interface AiBinding {
  run(model: string, inputs: Record<string, unknown>, options?: { gateway?: { id: string } }): Promise<unknown>;
}

export interface WorkersAiOptions {
  /** An AI Gateway id: requests go through it (logs, caching, rate limits). */
  gateway?: string;
}

/**
 * A Workers AI text-generation model with function calling. Requests carry the
 * conversation as chat messages and the tools as functions; the answer comes back
 * in one of the documented shapes: `{response, tool_calls: [{name, arguments}], usage}`
 * or, for models with an OpenAI-compatible output, `{choices: [{message}], usage}`.
 */
export function workersAiModel(model: string, binding: AiBinding, opts: WorkersAiOptions = {}): Model {
  return {
    async request(req: ModelRequest): Promise<ModelResponse> {
      const inputs = {
        messages: await toWorkersAiMessages(req.messages),
        ...(req.tools.length ? { tools: req.tools.map((t) => ({ type: "function", function: t })) } : {}),
        ...(req.output ? { response_format: { type: "json_schema", json_schema: req.output } } : {}),
      };
      const raw = await binding.run(model, inputs, opts.gateway ? { gateway: { id: opts.gateway } } : undefined);
      return fromWorkersAi(raw);
    },
  };
}

async function toWorkersAiMessages(messages: Message[]): Promise<Array<Record<string, unknown>>> {
  const toolNames = new Map<string, string>();
  return Promise.all(
    messages.map(async (m) => {
      switch (m.role) {
        case "assistant":
          for (const c of m.toolCalls ?? []) toolNames.set(c.id, c.name);
          return {
            role: "assistant",
            content: m.content ?? "",
            ...(m.toolCalls?.length
              ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
              : {}),
          };
        case "tool":
          // `name` too: models with the older tool format match results by name, not id.
          return { role: "tool", tool_call_id: m.toolCallId, name: toolNames.get(m.toolCallId), content: m.content };
        case "user":
          return { role: "user", content: typeof m.content === "string" ? m.content : await inlineText(m.content) };
        default:
          return { role: m.role, content: m.content };
      }
    }),
  );
}

/**
 * Text attachments go inline. Images and files are refused rather than dropped: a
 * model that never saw the screenshot would answer as if it had. (The binding's
 * vision models take one image in a shape of their own, not chat content parts.)
 */
async function inlineText(parts: ContentPart[]): Promise<string> {
  const binary = parts.find((p) => p.type === "attachment" && !isTextType(p.mime));
  if (binary?.type === "attachment") {
    throw new Error(`Workers AI models take text only: attachment ${binary.name} (${binary.mime}) cannot be sent; use an openai:* model for images and PDFs`);
  }
  return (await resolveParts(parts)).map((p) => (p.type === "text" ? p.text : "")).join("\n\n");
}

/** Arguments as an object (the documented format) or as JSON text (the OpenAI one). */
const args = z.union([z.string(), z.record(z.string(), z.unknown())]).optional();
const toolCall = z.union([
  z.object({ id: z.string().optional(), function: z.object({ name: z.string(), arguments: args }) }),
  z.object({ id: z.string().optional(), name: z.string(), arguments: args }),
]);
const usage = z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).optional();
const output = z.union([
  z.object({
    choices: z.array(z.object({ message: z.object({ content: z.string().nullish(), tool_calls: z.array(toolCall).nullish() }) })).min(1),
    usage,
  }),
  z
    .object({ response: z.unknown().optional(), tool_calls: z.array(toolCall).nullish(), usage })
    .refine((o) => o.response !== undefined || !!o.tool_calls?.length, "has neither response nor tool_calls"),
  z.string(),
]);

function fromWorkersAi(raw: unknown): ModelResponse {
  const parsed = output.safeParse(raw);
  if (!parsed.success) throw new Error(`Workers AI returned an unexpected response: ${z.prettifyError(parsed.error).slice(0, 500)}`);
  const out = parsed.data;
  if (typeof out === "string") return { text: out, toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } };
  const message = "choices" in out ? out.choices[0]!.message : { content: textOf(out.response), tool_calls: out.tool_calls };
  return {
    text: message.content || null,
    toolCalls: (message.tool_calls ?? []).map(toModelToolCall),
    usage: { inputTokens: out.usage?.prompt_tokens ?? 0, outputTokens: out.usage?.completion_tokens ?? 0 },
  };
}

/** A JSON-mode answer may arrive parsed; the engine wants the text. */
const textOf = (response: unknown): string | null =>
  response === undefined || response === null ? null : typeof response === "string" ? response : JSON.stringify(response);

function toModelToolCall(c: z.infer<typeof toolCall>, i: number): ModelToolCall {
  const { name, arguments: a } = "function" in c ? c.function : c;
  // The documented format has no ids; the loop keys journal steps by id, so make stable ones.
  return { id: c.id || `call_${i + 1}`, name, arguments: typeof a === "string" ? a : JSON.stringify(a ?? {}) };
}
