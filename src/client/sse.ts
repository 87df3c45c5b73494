import { raceAbort } from "./abort";

/**
 * A server-sent events parser (the WHATWG event-stream format), bounded: a line
 * or an event past its limit is an error, found as it arrives (not after the
 * stream was buffered whole). Lines are found by scanning for CR and LF, no regex.
 */

export interface SseMessage {
  /** `message` when the stream names none. */
  event: string;
  data: string;
  /** The last `id:` seen so far in the stream (it carries over to later events), or null. */
  id: string | null;
}

export interface SseLimits {
  /** Characters in one line. */
  maxLineChars: number;
  /** Characters of data in one event. */
  maxEventChars: number;
}

/** Generous for the server's events (a model turn's text), small enough that a broken proxy cannot fill memory. */
export const DEFAULT_SSE_LIMITS: SseLimits = { maxLineChars: 4 * 1024 * 1024, maxEventChars: 4 * 1024 * 1024 };

export class SseLimitError extends Error {
  override readonly name = "SseLimitError";
}

/** Feed it text as it arrives; it hands each complete event to `emit`. */
export class SseParser {
  private line: string[] = [];
  private lineChars = 0;
  /** The last chunk ended in CR: an LF starting the next one belongs to the same line break. */
  private afterCR = false;
  private started = false;
  private event = "";
  private data: string[] = [];
  private dataChars = 0;
  private lastId: string | null = null;

  constructor(
    private readonly emit: (message: SseMessage) => void,
    private readonly limits: SseLimits = DEFAULT_SSE_LIMITS,
  ) {}

  feed(chunk: string): void {
    let at = 0;
    if (!this.started && chunk.length) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) at = 1; // a byte order mark before the first line
    }
    if (this.afterCR && chunk.charCodeAt(at) === 10) at++;
    this.afterCR = false;
    while (at < chunk.length) {
      const end = lineEnd(chunk, at);
      if (end === -1) {
        this.append(chunk.slice(at));
        return;
      }
      this.append(chunk.slice(at, end));
      this.endLine();
      const cr = chunk.charCodeAt(end) === 13;
      if (cr && end + 1 === chunk.length) {
        this.afterCR = true;
        return;
      }
      at = cr && chunk.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
    }
  }

  /** The stream ended: an event without its closing blank line is dropped, as the format says. */
  end(): void {
    this.line = [];
    this.lineChars = 0;
    this.resetEvent();
  }

  private append(piece: string): void {
    if (!piece) return;
    this.lineChars += piece.length;
    if (this.lineChars > this.limits.maxLineChars) throw new SseLimitError(`an event-stream line is longer than ${this.limits.maxLineChars} characters`);
    this.line.push(piece);
  }

  private endLine(): void {
    const line = this.line.join("");
    this.line = [];
    this.lineChars = 0;
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" a comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    this.field(field, value);
  }

  private field(name: string, value: string): void {
    if (name === "event") this.event = value;
    else if (name === "data") {
      this.dataChars += value.length + 1;
      if (this.dataChars > this.limits.maxEventChars) throw new SseLimitError(`an event's data is longer than ${this.limits.maxEventChars} characters`);
      this.data.push(value);
    } else if (name === "id" && !value.includes("\u0000")) this.lastId = value;
    // `retry:` and unknown fields are ignored: the client paces its own reconnects.
  }

  private dispatch(): void {
    if (this.data.length) this.emit({ event: this.event || "message", data: this.data.join("\n"), id: this.lastId });
    this.resetEvent();
  }

  private resetEvent(): void {
    this.event = "";
    this.data = [];
    this.dataChars = 0;
  }
}

/** The index of the first CR or LF at or after `from`, or -1. */
function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}

/**
 * The events of a response body, as they arrive. Ending the iteration early
 * (break, an error, or the signal aborting a read) cancels the body.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal, limits: SseLimits = DEFAULT_SSE_LIMITS): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const ready: SseMessage[] = [];
  const parser = new SseParser((m) => ready.push(m), limits);
  try {
    for (;;) {
      const { value, done } = await raceAbort(reader.read(), signal);
      let failure: unknown;
      try {
        parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
        if (done) parser.end();
      } catch (err) {
        failure = err;
      }
      // The events complete before a limit was crossed are still delivered.
      for (const m of ready.splice(0)) yield m;
      if (failure) throw failure;
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
