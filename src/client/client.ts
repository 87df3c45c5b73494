import { Approvals } from "./approvals";
import { Operations } from "./operations";
import { Schedules } from "./schedules";
import { Runs } from "./runs";
import { type Fetch, Transport } from "./transport";
import { Workers } from "./workers";

export interface ClientOptions {
  /** Where the app is served, with its mount path if any: `https://edgework.example.com`, `https://example.com/agents`. */
  baseURL: string;
  /** The app's `API_TOKEN`. */
  apiToken: string;
  /** Default: the global `fetch`. A service binding's, or the app itself in tests. */
  fetch?: Fetch;
  /** Per attempt (default 60 000). */
  timeoutMs?: number;
  /** Retries after no response, 429 or 5xx (default 2; see retry.ts for which requests). */
  maxRetries?: number;
}

/** A typed client of the edgework HTTP API (docs/client.md). Web-standard APIs only: Node, browsers, Workers. */
export class EdgeworkClient {
  readonly runs: Runs;
  readonly approvals: Approvals;
  readonly workers: Workers;
  readonly operations: Operations;
  readonly schedules: Schedules;

  constructor(options: ClientOptions) {
    if (!options.baseURL) throw new TypeError("EdgeworkClient: baseURL is required, e.g. https://edgework.example.com");
    if (!options.apiToken) throw new TypeError("EdgeworkClient: apiToken is required (the app's API_TOKEN)");
    const transport = new Transport({
      baseURL: options.baseURL,
      apiToken: options.apiToken,
      // Called unbound: some runtimes refuse a `fetch` called with another `this`.
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
    });
    this.runs = new Runs(transport);
    this.approvals = new Approvals(transport);
    this.workers = new Workers(transport);
    this.operations = new Operations(transport);
    this.schedules = new Schedules(transport);
  }
}
