import { describe, expect, it } from "vitest";
import { type ServerSentEvent, serverSentEvents } from "../../src/engine/mcp/sse";

/** The events read from `chunks`, fed one after another. */
async function read(chunks: string[]): Promise<ServerSentEvent[]> {
  const input = new ReadableStream<string>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  const out: ServerSentEvent[] = [];
  const reader = input.pipeThrough(serverSentEvents()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

const STREAM = [
  ": a comment",
  "event: message",
  'data: {"jsonrpc":"2.0",',
  'data:"id":1}',
  "id: 7",
  "retry: 100",
  "",
  "",
  "event: progress",
  "data",
  "",
  "data:  two spaces, one kept",
  "unknown: field",
  "",
  "event: no data",
  "",
  "data: cut off",
];
const EXPECTED = [{ event: "message", data: '{"jsonrpc":"2.0",\n"id":1}' }, { event: "progress", data: "" }, { data: " two spaces, one kept" }];

describe("a text/event-stream read into events (MCP answers)", () => {
  it("reads data, event names and blank lines as the HTML standard does; drops comments, other fields, empty events and one cut off", async () => {
    for (const eol of ["\n", "\r\n", "\r"]) expect(await read([STREAM.join(eol)]), JSON.stringify(eol)).toEqual(EXPECTED);
  });

  it("the same events however the text is cut into chunks, a CRLF split between two included", async () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const text = STREAM.join(eol);
      for (let at = 0; at <= text.length; at++) expect(await read([text.slice(0, at), text.slice(at)]), `${JSON.stringify(eol)} at ${at}`).toEqual(EXPECTED);
      expect(await read([...text]), `${JSON.stringify(eol)} a character at a time`).toEqual(EXPECTED);
    }
  });

  it("a CR ending a chunk ends its line once the next chunk shows no LF follows; a stream ending on a blank line's CR ends its event", async () => {
    // eventsource-parser, used before, kept both of these back.
    expect(await read(["data: a\r\r", "data: b"])).toEqual([{ data: "a" }]);
    expect(await read(["data: a\r", "\r", "data: b"])).toEqual([{ data: "a" }]);
    expect(await read(["data: a\r\r"])).toEqual([{ data: "a" }]);
    expect(await read(["data: a\r"])).toEqual([]);
  });

  it("a long line in many chunks is one value", async () => {
    const big = "x".repeat(1 << 20);
    const chunks: string[] = [];
    const text = `data: ${big}\n\n`;
    for (let i = 0; i < text.length; i += 4096) chunks.push(text.slice(i, i + 4096));
    const events = await read(chunks);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.length).toBe(big.length);
  });
});
