/** One event of a `text/event-stream`: its `event:` name (none means "message") and its `data:` lines, joined by LF. */
export interface ServerSentEvent {
  event?: string;
  data: string;
}

const LF = 10;
const CR = 13;

/**
 * A `text/event-stream`'s text (decoded: TextDecoderStream drops a BOM) read into its events, as
 * the HTML standard reads one: lines end with CRLF, LF or CR; `data:` lines join with LF; `event:`
 * names the event; a blank line ends it (one without data is no event); one space after the colon
 * is not part of the value; comments, `id:`, `retry:` and other fields are left out (an MCP answer's
 * stream is one request's, never resumed); an event the stream's end cuts off is dropped. Each
 * character is looked at once; the body it reads is capped (session.ts, MAX_RESPONSE_BYTES).
 */
export function serverSentEvents(): TransformStream<string, ServerSentEvent> {
  let pending = "";
  let data: string[] = [];
  let event: string | undefined;
  const line = (text: string, out: TransformStreamDefaultController<ServerSentEvent>) => {
    if (text === "") {
      if (data.length) out.enqueue(event ? { event, data: data.join("\n") } : { data: data.join("\n") });
      data = [];
      event = undefined;
      return;
    }
    const colon = text.indexOf(":");
    if (colon === 0) return;
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(text.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value || undefined;
  };
  return new TransformStream({
    transform(chunk, out) {
      const text = pending + chunk;
      let start = 0;
      // Only the new text is searched (a CR kept at the end of the last chunk is looked at again).
      for (let i = pending.endsWith("\r") ? pending.length - 1 : pending.length; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== LF && c !== CR) continue;
        // A CR at the end: the LF of a CRLF may come in the next chunk.
        if (c === CR && i === text.length - 1) break;
        line(text.slice(start, i), out);
        if (c === CR && text.charCodeAt(i + 1) === LF) i++;
        start = i + 1;
      }
      pending = text.slice(start);
    },
    flush(out) {
      // The stream ended on a CR that ends a blank line: the event before it is whole.
      if (pending === "\r") line("", out);
    },
  });
}
