import type { Fetch } from "../client";
import type { ScriptedTurn } from "./turns";

/** The model server (model-server.ts) seen from a test in the Workers pool. */
export interface ModelServer {
  /**
   * Loads `turns` for `model` (the model name a worker file names after its provider, e.g. `gpt-4o-mini` for `openai:gpt-4o-mini`), replacing what was left.
   * `refuseStreaming`: the model answers every streamed request `400` with `param: "stream"`, as a server that cannot stream does.
   */
  script(model: string, turns: readonly ScriptedTurn[], opts?: { refuseStreaming?: boolean }): Promise<void>;
  /** The chat-completion requests `model` was sent since its script was loaded (what the worker's model saw). */
  requests(model: string): Promise<unknown[]>;
  /** A URL a tool can POST to, to count a side effect: `countEffects(id)` reads the count. */
  effectUrl(id: string): string;
  /** How many times `effectUrl(id)` was POSTed to: proves an effect ran once (or never). */
  countEffects(id: string): Promise<number>;
}

/**
 * The model server at `url` (its `http://127.0.0.1:<port>`, e.g. a binding your vitest
 * config fills from globalSetup). Point the app's model at `${url}/v1` (OPENAI_BASE_URL,
 * or a models.yaml provider's base_url): the request's model name picks the script.
 */
export function modelServer(url: string, fetcher: Fetch = (input, init) => fetch(input, init)): ModelServer {
  const base = url.replace(/\/+$/, "");
  const read = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetcher(`${base}${path}`, init);
    if (!res.ok) throw new Error(`model server ${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const scriptPath = (model: string) => `/scripts/${encodeURIComponent(model)}`;
  return {
    async script(model, turns, opts = {}) {
      await read(`${scriptPath(model)}${opts.refuseStreaming ? "?refuse_stream=1" : ""}`, { method: "PUT", body: JSON.stringify(turns) });
    },
    async requests(model) {
      return (await read<{ requests: unknown[] }>(scriptPath(model))).requests;
    },
    effectUrl: (id) => `${base}/effects/${encodeURIComponent(id)}`,
    async countEffects(id) {
      return (await read<{ count: number }>(`/effects/${encodeURIComponent(id)}`)).count;
    },
  };
}
