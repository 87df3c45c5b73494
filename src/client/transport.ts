import { deadline, raceAbort, sleep } from "./abort";
import { ConnectionError, EdgeworkError, errorFromResponse, TimeoutError } from "./errors";
import { retryDelayMs } from "./retry";

/** `fetch` as the client calls it: the global one, or any with its signature (a Worker's service binding, a test's app). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** Per call: overrides the client's settings for one request. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** Per attempt, until the whole answer is read (for an event stream: until it starts). */
  timeoutMs?: number;
  maxRetries?: number;
}

export interface ApiRequest {
  method: "GET" | "POST" | "DELETE";
  /** Absolute path under the base URL, its segments already encoded. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TransportSettings {
  baseURL: string;
  apiToken: string;
  fetch: Fetch;
  timeoutMs: number;
  maxRetries: number;
}

/** Sends requests: the token, time limits, retries, and error responses as error classes. */
export class Transport {
  constructor(private readonly settings: TransportSettings) {}

  /** The JSON answer of a request. */
  json<T>(req: ApiRequest, options: RequestOptions = {}): Promise<T> {
    return this.send(req, options, async (res) => (await res.json()) as T);
  }

  /** The text answer of a request (YAML, say). */
  text(req: ApiRequest, options: RequestOptions = {}): Promise<string> {
    return this.send(req, options, (res) => res.text());
  }

  /**
   * A response whose body the caller reads (an event stream): the time limit
   * ends once the headers arrive; the reader races its reads against its own signal.
   */
  open(req: ApiRequest, options: RequestOptions = {}): Promise<Response> {
    return this.send(req, options, async (res) => res);
  }

  private async send<T>(req: ApiRequest, options: RequestOptions, read: (res: Response) => Promise<T>): Promise<T> {
    const maxRetries = options.maxRetries ?? this.settings.maxRetries;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt(req, options, read);
      } catch (err) {
        if (!(err instanceof EdgeworkError) || options.signal?.aborted) throw err;
        const delay = retryDelayMs(err, attempt, maxRetries);
        if (delay === null) throw err;
        await sleep(delay, options.signal);
      }
    }
  }

  private async attempt<T>(req: ApiRequest, options: RequestOptions, read: (res: Response) => Promise<T>): Promise<T> {
    const what = `${req.method} ${req.path}`;
    const timeoutMs = options.timeoutMs ?? this.settings.timeoutMs;
    const limit = deadline(options.signal, timeoutMs, () => new TimeoutError(`${what} got no answer within ${timeoutMs} ms`));
    try {
      const res = await raceAbort(this.settings.fetch(this.url(req), this.init(req, limit.signal)), limit.signal);
      if (!res.ok) throw await raceAbort(errorFromResponse(res, what), limit.signal);
      return await raceAbort(read(res), limit.signal);
    } catch (err) {
      if (limit.signal.aborted) throw limit.signal.reason; // a TimeoutError, or the caller's own reason
      if (err instanceof EdgeworkError) throw err;
      throw new ConnectionError(`${what} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    } finally {
      limit.dispose();
    }
  }

  private url(req: ApiRequest): string {
    let base = this.settings.baseURL;
    while (base.endsWith("/")) base = base.slice(0, -1);
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) query.set(k, String(v));
    const qs = query.toString();
    return `${base}${req.path}${qs ? `?${qs}` : ""}`;
  }

  private init(req: ApiRequest, signal: AbortSignal): RequestInit {
    const headers: Record<string, string> = { authorization: `Bearer ${this.settings.apiToken}`, accept: "application/json", ...req.headers };
    if (req.body !== undefined) headers["content-type"] = "application/json";
    return { method: req.method, headers, signal, ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}) };
  }
}
