// A bulk cancel (POST /operations) of `runs` live runs under wrangler dev, with `others` runs
// outside its filter; the whole app is stopped and started again (same state, same port) once
// `restartAfter` runs are done. Loopback only, bounded in count and time.
import { createServer } from "node:http";
import { answerCompletion } from "./chat-completion.mjs";
import { startLocalApp } from "../scripts/demo/local-app.mjs";

/** The fixture's model (tests/fixtures/workers/bench-sleeper.worker): its first answer sleeps an hour, any later one ends. */
async function sleeperModel() {
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    const body = JSON.parse(raw);
    const slept = body.messages.some((m) => m.role === "tool");
    const message = slept
      ? { role: "assistant", content: "rested" }
      : {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "s1", type: "function", function: { name: "sleep", arguments: '{"duration":"1h","reason":"bench"}' } }],
        };
    answerCompletion(res, body.model, message);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * @param {{ runs?: number, others?: number, restartAfter?: number, concurrency?: number, deadlineMs?: number, say?: (line: string) => void }} [opts]
 * @returns {Promise<{ runs: number, others: number, operation: { status: string, counts: { done: number, failed: number, skipped: number }, failures: unknown[] },
 *   ms: number, startMs: number, restarted: { at_done: number } | null, matching: Record<string, number>, outside: Record<string, number> }>}
 */
export async function bulkCancel({ runs = 1000, others = 100, restartAfter = 300, concurrency = 50, deadlineMs = 300_000, say = (_line) => {} } = {}) {
  const model = await sleeperModel();
  const vars = { API_TOKEN: "bulk-token", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bulk" };
  const workerDirs = ["workers", "tests/fixtures/workers"];
  let app = await startLocalApp({ workerDirs, vars });
  const headers = { authorization: "Bearer bulk-token", "content-type": "application/json" };
  const api = async (path, init = {}, extra = {}) => {
    let res = await fetch(`${app.url}${path}`, { ...init, headers: { ...headers, ...extra } });
    // wrangler dev restarts its Worker when its build reruns; a start carries an Idempotency-Key, so it is sent again safely.
    for (let i = 0; i < 3 && res.status === 503 && extra["idempotency-key"]; i++) {
      await new Promise((r) => setTimeout(r, 500));
      res = await fetch(`${app.url}${path}`, { ...init, headers: { ...headers, ...extra } });
    }
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const until = Date.now() + deadlineMs;
  const t0 = Date.now();
  try {
    const start = async (n, batch) => {
      const ids = [];
      let next = 0;
      const worker = async () => {
        while (next < n) {
          const key = `bulk-${batch}-${next++}`;
          const body = JSON.stringify({ worker: "bench-sleeper", input: "nap", attributes: { batch } });
          ids.push((await api("/runs", { method: "POST", body }, { "idempotency-key": key })).id);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return ids;
    };
    const matching = await start(runs, "bulk");
    const outside = await start(others, "outside");
    say(`started ${runs} + ${others} runs in ${Date.now() - t0} ms`);
    const listed = async (query) => {
      let n = 0;
      let cursor = null;
      do {
        const page = await api(`/runs?${query}&limit=200${cursor ? `&cursor=${cursor}` : ""}`);
        n += page.runs.length;
        cursor = page.next_cursor;
      } while (cursor);
      return n;
    };
    while ((await listed("attr.batch=bulk")) < runs) {
      if (Date.now() > until) throw new Error("the runs were not all indexed in time");
      await new Promise((r) => setTimeout(r, 500));
    }
    say(`indexed after ${Date.now() - t0} ms`);
    const started = Date.now();
    const { id } = await api("/operations", { method: "POST", body: JSON.stringify({ action: "cancel", filter: { attributes: { batch: "bulk" } } }) });
    let view;
    let restarted = null;
    for (;;) {
      view = await api(`/operations/${id}`);
      if (view.status !== "running" || Date.now() > until) break;
      if (!restarted && view.counts.done >= restartAfter) {
        await app.stop();
        restarted = { at_done: view.counts.done };
        say(`stopped the app at ${view.counts.done} done`);
        app = await startLocalApp({ workerDirs, vars, port: app.port, state: app.state });
        say("started it again");
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const ms = Date.now() - started;
    say(`operation ${view.status} after ${ms} ms: ${JSON.stringify(view.counts)}`);
    // The runs' own word (not the index's): each matching run cancelled, none outside.
    const statusOf = async (ids) => {
      const out = {};
      for (let i = 0; i < ids.length; i += concurrency)
        for (const s of await Promise.all(ids.slice(i, i + concurrency).map(async (r) => (await api(`/runs/${r}`)).status))) out[s] = (out[s] ?? 0) + 1;
      return out;
    };
    for (const r of matching) {
      const v = await api(`/runs/${r}`);
      if (v.status !== "cancelled") {
        say(
          `not cancelled: ${JSON.stringify({ id: v.id, status: v.status, output: v.output, error: v.error, created_at: v.created_at, op: view.created_at, tree: v.call_tree })}`,
        );
        break;
      }
    }
    return { runs, others, operation: view, ms, startMs: started - t0, restarted, matching: await statusOf(matching), outside: await statusOf(outside) };
  } finally {
    await app.stop();
    await model.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [runs, others, restartAfter] = process.argv.slice(2).map(Number);
  const r = await bulkCancel({ runs: runs || 1000, others: others || 100, restartAfter: restartAfter || 300, say: (l) => console.error(`[bulk-cancel] ${l}`) });
  console.log(JSON.stringify(r, null, 2));
}
