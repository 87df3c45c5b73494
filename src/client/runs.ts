import { deadline, sleep } from "./abort";
import { TimeoutError } from "./errors";
import type { RunEvent } from "./event-types";
import { runEvents, type RunEventsOptions } from "./run-events";
import type { RequestOptions, Transport } from "./transport";
import {
  type CancelledRun,
  type ForkedRun,
  type ForkRunParams,
  type JournalPage,
  type ListRunsQuery,
  type ResumedRun,
  type SentMessage,
  type Run,
  type RunPage,
  type RunStatus,
  type SendEventParams,
  type SentEvent,
  type StartedRun,
  type StartRunParams,
  TERMINAL_STATUSES,
} from "./types";

export interface WaitOptions {
  /** Statuses to wait for; default: any terminal status, `awaiting_approval` or `waiting`. A terminal status always ends the wait. */
  until?: readonly RunStatus[];
  /** Overall; past it the wait rejects with TimeoutError. Default: no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const WAIT_DEFAULT: readonly RunStatus[] = [...TERMINAL_STATUSES, "awaiting_approval", "waiting"];
const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 5_000;

/** `/runs`: start, read, wait for, list, cancel, resume, and follow runs. */
export class Runs {
  constructor(private readonly transport: Transport) {}

  /**
   * `POST /runs`, with an `Idempotency-Key` (yours, or a new random one) sent on every
   * attempt: retried like a read, since a repeat names the run the first attempt started.
   */
  start(params: StartRunParams, options?: RequestOptions): Promise<StartedRun> {
    const { worker, input, approvalMode, budget, notifyUrl, notifyOn, attributes, idempotencyKey = crypto.randomUUID() } = params;
    const body = {
      worker,
      input,
      ...(attributes ? { attributes } : {}),
      ...(approvalMode ? { approval_mode: approvalMode } : {}),
      ...(budget ? { budget: { max_tokens: budget.maxTokens, max_cost_usd: budget.maxCostUsd, on_exceed: budget.onExceed } } : {}),
      ...(notifyUrl ? { notify_url: notifyUrl } : {}),
      ...(notifyOn ? { notify_on: notifyOn } : {}),
    };
    return this.transport.json({ method: "POST", path: "/runs", body, headers: { "idempotency-key": idempotencyKey } }, options);
  }

  /** `GET /runs/:id`. */
  get(id: string, options?: RequestOptions): Promise<Run> {
    return this.transport.json({ method: "GET", path: runPath(id) }, options);
  }

  /**
   * Polls `GET /runs/:id` (0.25 s, growing to 5 s apart) until the run's status is
   * one of `until`, or terminal (it changes no more: check `status`).
   */
  async wait(id: string, options: WaitOptions = {}): Promise<Run> {
    const until = options.until ?? WAIT_DEFAULT;
    let last: Run | undefined;
    const limit = deadline(
      options.signal,
      options.timeoutMs,
      () => new TimeoutError(`run "${id}" is ${last ? `still ${last.status}` : "unread"} after ${options.timeoutMs} ms; waited for ${until.join(" or ")}`),
    );
    try {
      for (let delay = POLL_FIRST_MS; ; delay = Math.min(delay * 1.5, POLL_MAX_MS)) {
        last = await this.get(id, { signal: limit.signal });
        if (until.includes(last.status) || TERMINAL_STATUSES.includes(last.status)) return last;
        await sleep(delay, limit.signal);
      }
    } finally {
      limit.dispose();
    }
  }

  /** One page of `GET /runs` (pass a page's `next_cursor` as `cursor` for the next). */
  page(query: ListRunsQuery = {}, options?: RequestOptions): Promise<RunPage> {
    return this.transport.json({ method: "GET", path: "/runs", query: runsQuery(query) }, options);
  }

  /** Every page of `GET /runs` from `query.cursor` on (newest first), following `next_cursor` to the end. */
  async *list(query: ListRunsQuery = {}, options?: RequestOptions): AsyncGenerator<RunPage> {
    let cursor = query.cursor;
    do {
      const page = await this.page({ ...query, cursor }, options);
      yield page;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** `POST /runs/:id/cancel`; a run that already ended → ConflictError. */
  cancel(id: string, options?: RequestOptions): Promise<CancelledRun> {
    return this.transport.json({ method: "POST", path: `${runPath(id)}/cancel` }, options);
  }

  /**
   * `POST /runs/:id/messages`: the next message of the run's conversation; its root worker
   * answers it with its whole history (`wait` for the answer). A run still working keeps it
   * waiting its turn (`waiting: true`). Without an `options.id` it is not retried unless
   * `options.maxRetries` says so: a repeat after a lost response would be a second message.
   * With one, a repeat is the same message (`duplicate: true`), so it is retried as other
   * requests are. A run that failed or was cancelled → ConflictError.
   */
  sendMessage(id: string, text: string, options?: RequestOptions & { id?: string }): Promise<SentMessage> {
    const { id: messageId, ...request } = options ?? {};
    const body = messageId === undefined ? { text } : { text, id: messageId };
    return this.transport.json(
      { method: "POST", path: `${runPath(id)}/messages`, body },
      { ...request, maxRetries: request.maxRetries ?? (messageId === undefined ? 0 : undefined) },
    );
  }

  /** `POST /runs/:id/resume`: re-arms a run that lost its wake-up; ConflictError says why not. */
  resume(id: string, options?: RequestOptions): Promise<ResumedRun> {
    return this.transport.json({ method: "POST", path: `${runPath(id)}/resume` }, options);
  }

  /** One page of `GET /runs/:id/journal`: the run's steps (key, kind, time, size), oldest first. */
  journal(id: string, query: { after?: number; limit?: number } = {}, options?: RequestOptions): Promise<JournalPage> {
    return this.transport.json({ method: "GET", path: `${runPath(id)}/journal`, query }, options);
  }

  /** `GET /runs/:id/eval-case`: the run as an eval suite of one case, YAML to commit under `evals/` (docs/evals.md). */
  evalCase(id: string, options?: RequestOptions): Promise<string> {
    return this.transport.text({ method: "GET", path: `${runPath(id)}/eval-case` }, options);
  }

  /**
   * `POST /runs/:id/fork`: a new run that replays this run's steps before `at` and runs
   * on from there. Never retried (each fork is a new run, and the route takes no
   * Idempotency-Key): after a ConnectionError or 5xx, look for the fork before forking again.
   */
  fork(id: string, params: ForkRunParams, options?: RequestOptions): Promise<ForkedRun> {
    const body = {
      at: params.at,
      ...(params.definitions ? { definitions: params.definitions } : {}),
      ...(params.approvalMode ? { approval_mode: params.approvalMode } : {}),
    };
    return this.transport.json({ method: "POST", path: `${runPath(id)}/fork`, body }, { ...options, maxRetries: 0 });
  }

  /**
   * `POST /runs/:id/events/:name`: an event for the run, taken by a wait for `name` or
   * kept for the next one. Retried safely: the event's `id` (by default a random one per
   * call, reused by its retries) makes a repeat the same event.
   */
  sendEvent(id: string, name: string, params: SendEventParams, options?: RequestOptions): Promise<SentEvent> {
    const body = { ...params, id: params.id ?? crypto.randomUUID() };
    return this.transport.json({ method: "POST", path: `${runPath(id)}/events/${encodeURIComponent(name)}`, body }, options);
  }

  /** `GET /runs/:id/events` as typed events, reconnecting with Last-Event-ID, until the run ends (run-events.ts). */
  events(id: string, options?: RunEventsOptions): AsyncGenerator<RunEvent> {
    return runEvents(this.transport, id, options);
  }
}

export const runPath = (id: string) => `/runs/${encodeURIComponent(id)}`;

/** A listing's query string: `since` as epoch ms, each attribute as `attr.<name>`. */
export function runsQuery(query: ListRunsQuery): Record<string, string | number | undefined> {
  const { since, attributes, ...rest } = query;
  const attrs = Object.fromEntries(Object.entries(attributes ?? {}).map(([name, value]) => [`attr.${name}`, value]));
  return { ...rest, since: since instanceof Date ? since.getTime() : since, ...attrs };
}
