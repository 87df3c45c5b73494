import { describe, expect, it } from "vitest";
import { readSse, SseLimitError, SseParser, type SseMessage } from "../../src/client/sse";

/** Every event of a stream fed in the given pieces. */
function parse(pieces: string[], limits = { maxLineChars: 1000, maxEventChars: 1000 }): SseMessage[] {
  const out: SseMessage[] = [];
  const parser = new SseParser((m) => out.push(m), limits);
  for (const p of pieces) parser.feed(p);
  parser.end();
  return out;
}

/** The text cut at every position into two pieces: each cut must parse the same as the whole. */
const everySplit = (text: string) => Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);

const stream = (chunks: Array<string | Uint8Array>) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
      c.close();
    },
  });

describe("the SSE parser (src/client/sse.ts)", () => {
  it("reads the server's events: id, event, data, blank line", () => {
    expect(parse(['id: 3-1\nevent: turn\ndata: {"turn":1}\n\nid: 4-1\nevent: run_succeeded\ndata: {}\n\n'])).toEqual([
      { id: "3-1", event: "turn", data: '{"turn":1}' },
      { id: "4-1", event: "run_succeeded", data: "{}" },
    ]);
  });

  it("gives the same events however the stream is cut, CRLF split across chunks included", () => {
    const text = "\uFEFFid: 1-0\r\nevent: a\r\ndata: x\r\n\r\n:comment\rdata: y\rdata:z\r\rid: 2-0\ndata\n\n";
    const whole = parse([text]);
    expect(whole).toEqual([
      { id: "1-0", event: "a", data: "x" },
      { id: "1-0", event: "message", data: "y\nz" },
      { id: "2-0", event: "message", data: "" },
    ]);
    for (const pieces of everySplit(text)) expect(parse(pieces), JSON.stringify(pieces)).toEqual(whole);
    expect(parse([...text])).toEqual(whole);
  });

  it("ignores comments, retry, unknown fields, ids with NUL and an event cut off by the end of the stream", () => {
    expect(parse([": keep-alive\nretry: 10\nfoo: bar\nid: ok\n\nid: a\u0000b\ndata: 1\n\ndata: lost"])).toEqual([{ id: "ok", event: "message", data: "1" }]);
  });

  it("refuses a line longer than the limit as it arrives, without waiting for its end", () => {
    const parser = new SseParser(() => {}, { maxLineChars: 100, maxEventChars: 1000 });
    parser.feed("data: ");
    expect(() => {
      for (let i = 0; i < 1000; i++) parser.feed("x".repeat(10));
    }).toThrow(SseLimitError);
  });

  it("refuses an event whose data lines together pass the limit", () => {
    const lines = Array.from({ length: 20 }, () => `data: ${"y".repeat(60)}\n`).join("");
    expect(() => parse([lines], { maxLineChars: 100, maxEventChars: 1000 })).toThrow(/an event's data is longer than 1000 characters/);
  });

  it("stays linear on a hostile stream: a million CRs and a long line without a break", () => {
    const started = performance.now();
    expect(parse(["\r".repeat(1_000_000)], { maxLineChars: 10, maxEventChars: 10 })).toEqual([]);
    const parser = new SseParser(() => {}, { maxLineChars: 2_000_000, maxEventChars: 10 });
    for (let i = 0; i < 1000; i++) parser.feed(":".repeat(1000));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("readSse decodes UTF-8 split across chunks and still delivers the events before a limit is crossed", async () => {
    const bytes = new TextEncoder().encode('data: "é✓"\n\n');
    const got: SseMessage[] = [];
    for await (const m of readSse(stream([bytes.slice(0, 8), bytes.slice(8)]))) got.push(m);
    expect(got).toEqual([{ id: null, event: "message", data: '"é✓"' }]);

    const seen: string[] = [];
    const reading = (async () => {
      for await (const m of readSse(stream([`data: ok\n\ndata: ${"z".repeat(200)}\n\n`]), undefined, { maxLineChars: 100, maxEventChars: 100 }))
        seen.push(m.data);
    })();
    await expect(reading).rejects.toThrow(SseLimitError);
    expect(seen).toEqual(["ok"]);
  });

  it("readSse stops a read that never ends when its signal aborts, and cancels the body", async () => {
    let cancelled = false;
    const never = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    const controller = new AbortController();
    const reading = (async () => {
      for await (const _ of readSse(never, controller.signal));
    })();
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await expect(reading).rejects.toThrow("stop");
    expect(cancelled).toBe(true);
  });
});
