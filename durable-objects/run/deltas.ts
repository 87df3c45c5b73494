/**
 * Model text as it streams, for watchers of the run page: in direct dispatch from the
 * object's own model requests, in queue dispatch forwarded by the consumer holding a
 * claim (delta-forwarder.ts). Owns no table: memory only. Needs nothing from its host.
 */

import type { Model, ModelResolver } from "../../src/engine/types/model";
import type { ModelDelta } from "../../src/runs/types";

/** At most this much streamed text is kept; older pieces are dropped (a watcher that lags sees the recorded turn instead). */
const MAX_CHARS = 64 * 1024;
const MAX_PIECES = 4096;
/** A run page asks for pieces every quarter second or so: one that asked within this is open. */
const WATCHED_MS = 5_000;

/** A queued request whose consumer forwards its text: the claim's attempt, its stream, the last piece number taken. */
interface Forwarded {
  attempt: number;
  stream: number;
  n: number;
}

/**
 * Model text as it streams, in memory only: never a row per token. Only answers
 * still arriving are kept; a finished one is in the journal (its `turn` event), and
 * what an evicted object had here is gone the same way.
 */
export class DeltaBuffer {
  private pieces: ModelDelta[] = [];
  private chars = 0;
  private seq = 0;
  private streams = 0;
  private lastRead = Number.NEGATIVE_INFINITY;
  private readonly forwards = new Map<string, Forwarded>();

  /** A model resolver whose models stream into this buffer. */
  streaming(models: ModelResolver): ModelResolver {
    return (name) => {
      const model = models(name);
      return {
        request: (req) => {
          const stream = ++this.streams;
          // Once the answer is back it is about to be recorded (a `turn` event): its pieces go.
          return model.request({ ...req, onDelta: (text) => this.push(stream, text) }).finally(() => this.drop(stream));
        },
      } satisfies Model;
    };
  }

  /** A consumer claimed `key` (queue dispatch): its forwards are taken from now on, under a stream of their own; an earlier attempt's pieces go. */
  claimed(key: string, attempt: number): void {
    this.delivered(key);
    this.forwards.set(key, { attempt, stream: ++this.streams, n: 0 });
  }

  /**
   * Text the consumer holding `attempt` forwarded: taken only for the claim in force and
   * in order (a piece numbered below one taken arrived late, and is dropped).
   * False: not taken (another attempt, an answered request, an object that was evicted since the claim).
   */
  forwarded(key: string, attempt: number, n: number, text: string): boolean {
    const f = this.forwards.get(key);
    if (!f || f.attempt !== attempt || !(n > f.n)) return false;
    f.n = n;
    this.push(f.stream, text);
    return true;
  }

  /** The answer to `key` is in (or the run ended): its pieces go, as a direct request's do once it returns. */
  delivered(key: string): void {
    const f = this.forwards.get(key);
    if (!f) return;
    this.forwards.delete(key);
    this.drop(f.stream);
  }

  /** Someone read pieces lately: a consumer forwards often while a page is open, seldom otherwise. */
  watched(): boolean {
    return Date.now() - this.lastRead < WATCHED_MS;
  }

  private push(stream: number, text: string): void {
    const piece = { seq: ++this.seq, stream, text: text.slice(0, MAX_CHARS) };
    this.pieces.push(piece);
    this.chars += piece.text.length;
    while (this.chars > MAX_CHARS || this.pieces.length > MAX_PIECES) this.chars -= this.pieces.shift()!.text.length;
  }

  private drop(stream: number): void {
    this.pieces = this.pieces.filter((p) => p.stream !== stream);
    this.chars = this.pieces.reduce((n, p) => n + p.text.length, 0);
  }

  /** Pieces after `seq`, oldest first, and the cursor to ask with next. */
  since(seq: number): { deltas: ModelDelta[]; next: number } {
    this.lastRead = Date.now();
    return { deltas: this.pieces.filter((p) => p.seq > seq), next: this.seq };
  }
}
