import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseKey } from "../../src/engine/journal/keys";
import { historyTokens } from "../../src/engine/run/compaction";
import type { Message } from "../../src/engine/types/model";
import { modelRequests, script, settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const postMessage = (id: string, text: string) =>
  exports.default.fetch(new Request(`https://edgework.test/runs/${id}/messages`, { method: "POST", headers: auth, body: JSON.stringify({ text }) }));

/** ~250 tokens each, as the estimate counts: the fixture's budget of 3,000 holds about ten. */
const long = (n: number) => `message ${n}: ${"lorem ipsum ".repeat(83)}`;
const MESSAGES = 120;

type Sent = { messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> }> };
/** A request as the engine's messages, for the estimate the budget is kept by. */
const asMessages = (r: Sent) =>
  r.messages.map((m) => ({
    role: m.role,
    content: m.content,
    toolCalls: m.tool_calls?.map((c) => ({ id: "", name: c.function.name, arguments: c.function.arguments })),
  })) as Message[];

async function steps(id: string) {
  return (await stub(id).journalSteps(0, 100_000))!.steps;
}

describe("a long conversation through the API (context: summarize)", () => {
  it(`${MESSAGES} messages: past 50 and the old bounds, its history compacted, each summary asked once across evictions`, async () => {
    const id = "long-chat-api";
    await script(
      "long-chat",
      Array.from({ length: MESSAGES }, (_, i) => ({ text: `a${i + 1}` })),
    );
    await script(
      "long-chat-summary",
      Array.from({ length: MESSAGES }, (_, i) => ({ text: `summary ${i + 1}: <b>kept</b>` })),
    );
    await stub(id).start({ id, worker: "long-chat", input: { input: long(1) }, approvalMode: "ask", budget: {} });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "a1" });
    const count = { activations: 0, failed: 0 };
    for (let n = 2; n <= MESSAGES; n++) {
      // Every third message, the activation is evicted after its first new step (a summary, where one is due).
      if (n % 3 === 0) await stub(id).setTestHooks({ fault: { atJournalSize: (await steps(id)).length + 1, mode: "abort" } });
      const res = await postMessage(id, long(n));
      expect(res.status, `message ${n}`).toBe(202);
      expect(await settle(id, { count }), `message ${n}`).toMatchObject({ status: "succeeded", output: `a${n}` });
    }
    expect(count.failed).toBeGreaterThan(30);

    const view = (await stub(id).status())!;
    const journal = await steps(id);
    const compactions = journal.filter((s) => parseKey(s.key).kind === "compact");
    const summaries = journal.filter((s) => s.key.endsWith("/compact/ask:1"));
    expect(compactions.length).toBeGreaterThan(10);
    expect(summaries).toHaveLength(compactions.length);
    // Each summary asked once: the summarizer's requests are the compactions, not the replays.
    expect(await modelRequests("long-chat-summary")).toHaveLength(compactions.length);
    expect(await modelRequests("long-chat")).toHaveLength(MESSAGES);
    // Every request the worker's model got fit its budget; the last starts with the input and a summary.
    const requests = (await modelRequests("long-chat")) as Sent[];
    for (const r of requests) expect(historyTokens(asMessages(r))).toBeLessThanOrEqual(3_000);
    const last = requests.at(-1)!.messages;
    expect(last[1]!.content).toBe(long(1));
    expect(last[2]!.content).toMatch(
      /^\[Summary of \d+ earlier messages of this conversation, written by openai:long-chat-summary to fit the context:\]\nsummary \d+/,
    );
    expect(last.at(-1)!.content).toBe(long(MESSAGES));

    // The summaries' requests are the worker call's spending, in the call tree as in the run's usage.
    expect(view.usage!.requests).toBe(MESSAGES + compactions.length);
    expect(view.call_tree!.usage.requests).toBe(MESSAGES + compactions.length);
    // The run shows the whole conversation, where it was compacted and what replaced it.
    expect(view.messages).toHaveLength(2 * MESSAGES);
    expect(view.compactions).toHaveLength(compactions.length);
    expect(view.compactions[0]).toMatchObject({
      path: "long-chat",
      compact: "summarize",
      model: "openai:long-chat-summary",
      summary: "summary 1: <b>kept</b>",
    });
    expect(view.compactions[0]!.tokens_after).toBeLessThan(view.compactions[0]!.tokens_before);
    const page = await (await exports.default.fetch(new Request(`https://edgework.test/runs/${id}/view`, { headers: auth }))).text();
    expect(page).toContain(`History compacted (${compactions.length})`);
    expect(page).toContain("summarized by openai:long-chat-summary");
    expect(page).toContain("summary 1: &lt;b&gt;kept&lt;/b&gt;");
    const events = (await stub(id).eventsSince("0-0", 100_000))!.events.filter((e) => e.type === "history_compacted");
    expect(events).toHaveLength(compactions.length);
    expect(events[0]!.data).toMatchObject({ path: "long-chat", compact: "summarize", model: "openai:long-chat-summary" });

    // Measured: rows and bytes one compaction writes (its record and its summary's model step).
    const bytes = [...compactions, ...summaries].reduce((n, s) => n + s.bytes, 0);
    console.log(
      `compaction: ${compactions.length} in ${MESSAGES} messages; 2 rows each, ${Math.round(bytes / compactions.length)} bytes of values on average; journal ${journal.length} rows, ${journal.reduce((n, s) => n + s.bytes, 0)} bytes`,
    );
  }, 240_000);
});
