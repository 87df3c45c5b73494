/**
 * MODEL_DISPATCH=queue, the consumer's side of live text: the model's text pieces,
 * gathered and sent to the run's object at most once per interval (a short RPC into
 * its DeltaBuffer), so the object is not kept active for the whole answer. Best
 * effort: a forward that fails or hangs loses only live text, never the answer.
 */

import { numberVar } from "../src/config";

/** Default time between two forwards while someone watches the run page (MODEL_DELTA_INTERVAL_MS; 0: no live text). */
export const DEFAULT_DELTA_INTERVAL_MS = 200;
/** The interval in force; a bad value turns live text off, said in the log, rather than failing the model request it only decorates. */
export function deltaIntervalMs(env: Env): number {
  try {
    return numberVar(env, "MODEL_DELTA_INTERVAL_MS", DEFAULT_DELTA_INTERVAL_MS);
  } catch (err) {
    console.warn(JSON.stringify({ edgework: "model_delta_interval_invalid", error: err instanceof Error ? err.message : String(err) }));
    return 0;
  }
}
/** Between forwards while nobody watches: the text still reaches the object, for a watcher who comes later, in few requests. */
export const UNWATCHED_INTERVAL_MS = 5_000;
/** A forward not answered within this is given up (its text lost): the next one is sent anyway. */
export const FORWARD_TIMEOUT_MS = 2_000;
/** Text kept between forwards; older text is dropped (the object keeps no more than this either). */
export const MAX_PENDING_CHARS = 64 * 1024;

/** One forward: pieces are numbered so the object ignores one that arrives after a later one (a forward given up on). */
export type SendDelta = (n: number, text: string) => Promise<{ watched: boolean }>;

/** Counted per answer, for the consumer's log and the cost figures. */
export interface ForwardStats {
  forwards: number;
  failed: number;
  chars: number;
}

export class DeltaForwarder {
  private pending = "";
  private n = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight = false;
  private closed = false;
  /** Assumed at first, so the first text is quick; each forward's answer says whether the page is open. */
  private watched = true;
  readonly stats: ForwardStats = { forwards: 0, failed: 0, chars: 0 };

  constructor(
    private readonly send: SendDelta,
    private readonly intervalMs: number,
  ) {}

  /** A piece of the model's text: never waits, never throws. */
  push(text: string): void {
    if (this.closed || !text) return;
    this.pending = (this.pending + text).slice(-MAX_PENDING_CHARS);
    this.schedule();
  }

  /** The answer is complete: text not yet sent is dropped (the recorded turn replaces it on the page). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.pending = "";
  }

  private schedule(): void {
    if (this.timer !== undefined || this.inFlight || this.closed) return;
    this.timer = setTimeout(() => this.flush(), this.watched ? this.intervalMs : Math.max(this.intervalMs, UNWATCHED_INTERVAL_MS));
  }

  private flush(): void {
    this.timer = undefined;
    if (this.closed || !this.pending) return;
    const text = this.pending;
    this.pending = "";
    this.inFlight = true;
    this.stats.forwards++;
    this.stats.chars += text.length;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("forward timed out")), FORWARD_TIMEOUT_MS)));
    // Not awaited by the model's stream: the consumer's request goes on whatever happens here.
    Promise.race([this.send(++this.n, text), gaveUp])
      .then(
        (answer) => void (this.watched = answer.watched === true),
        () => void this.stats.failed++,
      )
      .finally(() => {
        clearTimeout(timer);
        this.inFlight = false;
        if (this.pending) this.schedule();
      });
  }
}
