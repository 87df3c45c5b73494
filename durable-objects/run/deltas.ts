/**
 * Model text as it streams (direct dispatch), for watchers of the run page. Owns no
 * table: memory only. Needs nothing from its host.
 */

import type { Model, ModelResolver } from "../../src/engine/types/model";
import type { ModelDelta } from "../../src/runs/types";

/** At most this much streamed text is kept; older pieces are dropped (a watcher that lags sees the recorded turn instead). */
const MAX_CHARS = 64 * 1024;
const MAX_PIECES = 4096;

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
    return { deltas: this.pieces.filter((p) => p.seq > seq), next: this.seq };
  }
}
