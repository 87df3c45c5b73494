import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, MemoryJournalStore, scriptedModel, tool } from "../../src/engine";
import { callTree } from "../../src/engine/journal/call-tree";
import { journalUsage, rolledUpUsage } from "../../src/engine/journal/run-usage";
import { RunPage } from "../../src/views/run-page";
import { deskRunView, harness, workerFile } from "./helpers";

// An upstream (an instance named as its kind: tools unprefixed) that answers JSON as text, as MCP servers and HTTP APIs do: the tool's result is a string holding JSON.
const upstream = defineToolset({
  kind: "upstream",
  config: z.strictObject({}),
  create: () => ({}),
  tools: {
    short: tool({ description: "a small JSON answer", readOnly: true, input: z.strictObject({}), run: () => JSON.stringify({ ok: true, id: 7 }) }),
    long: tool({
      description: "a long JSON answer, wrapped",
      readOnly: true,
      input: z.strictObject({}),
      run: () => ({ status: 200, body: JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item ${i}` })) }) }),
    }),
  },
});

const desk = workerFile(`name: desk\nmodel: test:desk\ntoolsets:\n  upstream: { use: upstream }\n  workers: [helper]`);
const helper = workerFile(`name: helper\ndescription: helps\nmodel: test:helper`);

async function page() {
  const model = scriptedModel([
    {
      toolCalls: [
        { name: "short", args: {} },
        { name: "long", args: {} },
        { name: "helper", args: { input: "x" } },
      ],
      usage: { inputTokens: 10, outputTokens: 5 },
    },
    { text: "done", usage: { inputTokens: 20, outputTokens: 2 } },
  ]);
  const h = harness(
    { "desk.worker": desk, "helper.worker": helper },
    { kinds: [upstream], models: { "test:desk": model, "test:helper": scriptedModel([{ text: "helped", usage: { inputTokens: 3, outputTokens: 1 } }]) } },
  );
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "desk", input: { input: "go" } }, store);
  expect(out.status).toBe("succeeded");
  const tree = callTree(store.entries)!;
  const run = deskRunView(tree, { output: "done", usage: journalUsage(store.entries) });
  return { html: String(await RunPage({ run, events: "/runs/r/view/events" })), out, tree, run };
}

describe("run page: tool results and usage", () => {
  it("a tool result that is JSON inside a string is shown unfolded and pretty, a long one folded in <details>", async () => {
    const { html } = await page();
    expect(html).not.toContain("\\&quot;");
    expect(html).not.toContain('\\"');
    // The short one: pretty, open.
    expect(html).toContain("<pre>{\n  &quot;ok&quot;: true,\n  &quot;id&quot;: 7\n}</pre>");
    // The long one: its body unfolded, under a summary line.
    expect(html).toMatch(
      /<details class="result"><summary><code>\{<\/code> … \(\d+ lines\)<\/summary><pre>\{\n {2}&quot;status&quot;: 200,\n {2}&quot;body&quot;: \{\n {4}&quot;items&quot;: \[/,
    );
  });

  it("the summary and the top of the call tree show the run's usage, nested calls included, as the engine counted it", async () => {
    const { html, out, tree, run } = await page();
    expect(run.usage).toEqual(out.usage);
    expect(rolledUpUsage(tree)).toEqual(out.usage);
    expect(html).toContain("3 model requests, 33 input + 8 output tokens");
    expect(html).toContain("<strong>desk</strong> — 2 turns, 41 tokens");
  });
});

describe("the run page links a run's parent and children (child runs)", () => {
  it("a child's page links its parent; a parent's page links each child with its status; ids are escaped", async () => {
    const child = deskRunView(null, { id: "child-1", parent: { run: "lead-run", call_path: "lead/turn:1/tool:1/spawn:1" } });
    const childHtml = String(await RunPage({ run: child, events: "/runs/child-1/view/events" }));
    expect(childHtml).toContain('href="/runs/lead-run/view"');
    expect(childHtml).toContain("lead/turn:1/tool:1/spawn:1");
    const parent = deskRunView(null, {
      children: [
        { id: "child-a", worker: "summarize", call_path: "lead/spawn:1", status: "succeeded" },
        { id: "<b>x", worker: "summarize", call_path: "lead/spawn:2", status: "running" },
      ],
    });
    const html = String(await RunPage({ run: parent, events: "/runs/r/view/events" }));
    expect(html).toContain('href="/runs/child-a/view"');
    expect(html).toMatch(/summarize: succeeded/);
    expect(html).not.toContain("<b>x");
    expect(String(await RunPage({ run: deskRunView(null), events: "/e" }))).not.toContain("child-runs");
  });
});
