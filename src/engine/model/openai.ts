import OpenAI, { type ClientOptions } from "openai";
import { VERSION } from "openai/version";
import { dataUrl, resolveParts } from "./content-parts";
import { refusesStreaming, streamRefusals } from "./stream-refusal";
import { whenConnected, type Connections } from "../net/connection-slots";
import type { ContentPart, Model, ModelRequest, ModelResponse } from "../types/model";

export interface OpenAIOptions {
  /** Without one no Authorization header is sent (a local server, or a key in `headers`). */
  apiKey?: string;
  baseURL?: string;
  /** Extra headers on every request (e.g. a provider's own auth or version header). */
  headers?: Record<string, string>;
  /** Injected in tests; the platform's fetch otherwise. */
  fetch?: typeof fetch;
  /** The invocation's connections (net/connection-slots.ts): each request takes its turn; without, requests go out at once. */
  connections?: Connections;
  /** Retries with exponential backoff on 408/409/429/5xx and network errors. */
  maxRetries?: number;
  /** How long one model request may wait for its answer to begin, retries included, from when it had a connection; never retried itself (default 60 s). */
  timeoutMs?: number;
  /** false: never ask for a streamed answer, even for live text (a server that cannot stream). */
  stream?: boolean;
  /** The provider's name, for the log and for what this isolate remembers of it (stream-refusal.ts); default "openai". */
  provider?: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The official client with nothing taken from `process.env` (which nodejs_compat fills
 * with the app's vars and secrets): left unset, it would read OPENAI_API_KEY,
 * OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_ADMIN_KEY,
 * OPENAI_WEBHOOK_SECRET and OPENAI_LOG, and send OpenAI's key to every other provider.
 * OPENAI_CUSTOM_HEADERS has no option that turns it off (openai 6.49 merges it under
 * `defaultHeaders` in the constructor), so the configured headers are set again after it.
 */
class ConfiguredOpenAI extends OpenAI {
  constructor(options: ClientOptions) {
    super(options);
    this._options = { ...this._options, defaultHeaders: options.defaultHeaders };
  }
}

/**
 * A model through the official client, against any OpenAI-compatible base URL; every option explicit (see ConfiguredOpenAI).
 * With `onDelta` the answer is streamed, unless the provider says `stream: false` or has refused a
 * streamed request in this isolate: one refused for streaming is asked again, once, without it,
 * and the answer says so (`streamRefused`).
 */
export function openaiModel(model: string, opts: OpenAIOptions): Model {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const provider = opts.provider ?? "openai";
  const baseURL = opts.baseURL || "https://api.openai.com/v1";
  const client = new ConfiguredOpenAI({
    // The client insists on a key; the null header below keeps this placeholder off the wire.
    apiKey: opts.apiKey || "none",
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    logLevel: "warn",
    baseURL,
    // The client names itself by its class's name, which a minified bundle (keep_names = false) renames.
    defaultHeaders: { "User-Agent": `OpenAI/JS ${VERSION}`, ...(opts.apiKey ? {} : { Authorization: null }), ...opts.headers },
    fetch: opts.fetch,
    maxRetries: opts.maxRetries ?? 3,
    // The client retries its own timeout, asking (and paying) the model again while the first
    // request may still be answering: the request's signal bounds it instead, and an abort is not retried.
    timeout: 2 * timeoutMs,
  });
  return {
    async request(req: ModelRequest): Promise<ModelResponse> {
      const params = {
        model,
        messages: await Promise.all(req.messages.map(toOpenAI)),
        ...(req.tools.length ? { tools: req.tools.map((t) => ({ type: "function" as const, function: t })), parallel_tool_calls: true } : {}),
        ...(req.output ? { response_format: { type: "json_schema" as const, json_schema: { name: "output", schema: req.output } } } : {}),
      };
      const ask = async (connected?: OpenAI): Promise<ModelResponse> => {
        const api = connected ?? client;
        // From when the request had a connection: a wait in line behind other requests takes none of it.
        const deadline = new AbortController();
        const timer = setTimeout(() => deadline.abort(), timeoutMs);
        const whole = async () => fromCompletion(await api.chat.completions.create(params, { signal: deadline.signal }));
        try {
          if (!req.onDelta || opts.stream === false) return await whole();
          if (!streamRefusals.has(provider, baseURL)) {
            try {
              return await streamed(api, params, req.onDelta, deadline.signal, () => clearTimeout(timer));
            } catch (err) {
              // Asked again under the same deadline: a refusal comes before any answer began.
              if (deadline.signal.aborted || !refusesStreaming(err)) throw err;
              streamRefusals.remember(provider, baseURL);
            }
          }
          return { ...(await whole()), streamRefused: true };
        } catch (err) {
          if (deadline.signal.aborted) throw new Error(`no answer within ${timeoutMs / 1000} s (timeout_ms)`);
          throw err;
        } finally {
          clearTimeout(timer);
        }
      };
      // Each request of this one (a retry, the unstreamed one after a refusal) takes its turn; the first is sent at once.
      return opts.connections ? whenConnected(opts.connections, (fetch) => ask(client.withOptions({ fetch })), opts.fetch) : ask();
    },
  };
}

function fromCompletion(completion: OpenAI.Chat.ChatCompletion): ModelResponse {
  const msg = completion.choices?.[0]?.message;
  return {
    text: msg?.content ?? null,
    toolCalls: (msg?.tool_calls ?? []).flatMap((c) => (c.type === "function" ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [])),
    usage: { inputTokens: completion.usage?.prompt_tokens ?? 0, outputTokens: completion.usage?.completion_tokens ?? 0 },
  };
}

const MAX_TOOL_CALLS = 128;

/** The same request streamed: text pieces go to `onDelta` as they arrive; tool calls and usage are put together from the chunks. */
async function streamed(
  client: OpenAI,
  params: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  onDelta: (text: string) => void,
  signal: AbortSignal,
  begun: () => void,
): Promise<ModelResponse> {
  const { data: stream, response } = await client.chat.completions
    .create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal })
    .withResponse();
  begun(); // the answer streams as long as it takes (as under the client's own timeout, which ends with the headers)
  // A compatible server that does not stream answers with the whole completion as JSON.
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) return fromCompletion((await response.json()) as OpenAI.Chat.ChatCompletion);
  let text: string | null = null;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let usage = { inputTokens: 0, outputTokens: 0 };
  for await (const chunk of stream) {
    if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) {
      text = (text ?? "") + delta.content;
      onDelta(delta.content);
    }
    for (const c of delta?.tool_calls ?? []) {
      if (c.index > MAX_TOOL_CALLS) continue; // an index from the wire must not size our array
      const call = (calls[c.index] ??= { id: "", name: "", arguments: "" });
      if (c.id) call.id = c.id;
      if (c.function?.name) call.name += c.function.name;
      if (c.function?.arguments) call.arguments += c.function.arguments;
    }
  }
  return { text, toolCalls: calls.filter((c) => c !== undefined), usage };
}

async function toOpenAI(m: ModelRequest["messages"][number]): Promise<OpenAI.Chat.ChatCompletionMessageParam> {
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
    case "user":
      return { role: "user", content: typeof m.content === "string" ? m.content : await userParts(m.content) };
    default:
      return { role: m.role, content: m.content };
  }
}

/** The documented chat-completions content parts: `image_url` with a data URL, `file` with `file_data`, `text`. */
async function userParts(parts: ContentPart[]): Promise<OpenAI.Chat.ChatCompletionContentPart[]> {
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every part type (TypeScript checks it), so each returns.
  return (await resolveParts(parts)).map((p): OpenAI.Chat.ChatCompletionContentPart => {
    switch (p.type) {
      case "text":
        return { type: "text", text: p.text };
      case "image":
        return { type: "image_url", image_url: { url: dataUrl(p.mime, p.base64) } };
      case "file":
        return { type: "file", file: { filename: p.filename, file_data: dataUrl(p.mime, p.base64) } };
    }
  });
}
