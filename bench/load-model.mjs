// The load test's model: an OpenAI-compatible server on 127.0.0.1 that answers each
// run's two requests (call `increment`, then answer) at once, counts requests per run
// and notes when each arrived and was answered (for the end-to-end timings).
import { createServer } from "node:http";
import { answerCompletion } from "./chat-completion.mjs";

export async function startLoadModel() {
  const perRun = new Map();
  /** seq → [{ arrived, answered }] in ms since the epoch (this machine's clock, as workerd's). */
  const timings = new Map();
  const now = () => performance.timeOrigin + performance.now();
  const server = createServer(async (req, res) => {
    const arrived = now();
    let raw = "";
    for await (const c of req) raw += c;
    const body = JSON.parse(raw);
    const seq = JSON.parse(body.messages.find((m) => m.role === "user").content).seq;
    perRun.set(seq, (perRun.get(seq) ?? 0) + 1);
    const called = body.messages.some((m) => m.role === "tool");
    const message = called
      ? { role: "assistant", content: `done ${seq}` }
      : { role: "assistant", content: null, tool_calls: [{ id: `c${seq}`, type: "function", function: { name: "increment", arguments: "{}" } }] };
    answerCompletion(res, body.model, message, { prompt_tokens: 20, completion_tokens: 5 });
    const t = timings.get(seq) ?? [];
    t.push({ arrived, answered: now() });
    timings.set(seq, t);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/v1`, perRun, timings, close: () => new Promise((r) => server.close(r)) };
}
