import OpenAI from "openai";

/**
 * "Streaming is not supported", "does not support streaming", "stream=true is unsupported":
 * an error's text that refuses streaming itself. Flat and bounded (the text is the server's).
 */
const STREAMING_UNSUPPORTED = /\bstream(?:ing)?\b[^.;\n]{0,40}?\b(?:not |un)supported\b|\b(?:not|n't|cannot) support stream/i;

/**
 * Whether a streamed request failed because the server will not stream: a 400 whose error
 * names `param: "stream"` (or `stream_options`, which only a streamed request sends), or
 * says in words that streaming is unsupported. Any other failure, and any other 400, is the
 * request's own: asking again without streaming would not change it.
 */
export function refusesStreaming(err: unknown): boolean {
  if (!(err instanceof OpenAI.APIError) || err.status !== 400) return false;
  if (err.param === "stream" || err.param === "stream_options") return true;
  return STREAMING_UNSUPPORTED.test(err.message.slice(0, 500));
}

/**
 * The providers that refused a streamed request in this isolate, by name and base URL:
 * asked without streaming from then on (their answers come whole, without live text).
 * Memory only, like the isolate: a deploy or a new isolate tries streaming again.
 */
const refused = new Set<string>();

export const streamRefusals = {
  has: (provider: string, baseURL: string) => refused.has(`${provider}\n${baseURL}`),
  /** Remembers a refusal; the first for a provider and URL is logged, with the provider's name only (never its URL, which may hold a key). */
  remember(provider: string, baseURL: string): void {
    const key = `${provider}\n${baseURL}`;
    if (refused.has(key)) return;
    refused.add(key);
    console.warn(JSON.stringify({ edgework: "model_stream_refused", provider }));
  },
};
