import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Span } from "../../src/engine/journal/timeline";
import type { RunView } from "../../src/runs/types";
import { effectUrl, script, settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run that posts (paused ~80 ms for approval), then reads and asks a nested worker in parallel; every model reply is slow. */
async function timedRun(id: string): Promise<RunView> {
  await script("timeline-writer", [
    { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST" } }], delay_ms: 30 },
    {
      tool_calls: [
        { id: "read", name: "fx_fetch", arguments: { url: effectUrl(id) } },
        { id: "ask", name: "timeline-helper", arguments: { input: "hi" } },
      ],
      delay_ms: 30,
    },
    { text: "done", delay_ms: 30 },
  ]);
  await script("timeline-helper", [{ text: "helped", delay_ms: 60 }]);
  await stub(id).start({ id, worker: "timeline-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
  const paused = await settle(id);
  expect(paused.status).toBe("awaiting_approval");
  expect(paused.timeline.spans.at(-1)).toMatchObject({ kind: "pause", open: true });
  await sleep(80);
  await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" });
  return settle(id);
}

const ms = (s: Span) => s.end - s.start;
const overlap = (a: Span, b: Span) => a.start < b.end && b.start < a.end;

describe("the run's timeline", () => {
  it("each step's start is in its own journal row; GET /runs/:id carries worker calls, model requests, parallel tool calls, the nested worker and the pause", async () => {
    const id = "timeline-run";
    const done = await timedRun(id);
    expect(done.status).toBe("succeeded");
    // In the step's row: a start for every executed step; the decision was recorded, not executed.
    const rows = await runInDurableObject(env.RUNS.getByName(id), (_o, state) =>
      state.storage.sql.exec<{ key: string; at: number; started_at: number | null }>("SELECT key, at, started_at FROM journal ORDER BY seq").toArray(),
    );
    for (const r of rows) {
      if (r.key.endsWith("/approval")) expect(r.started_at, r.key).toBeNull();
      else expect(r.started_at! <= r.at && r.started_at! >= done.created_at, r.key).toBe(true);
    }

    const { timeline } = (await (await call(`/runs/${id}`)).json()) as RunView;
    const shape = timeline.spans.map((s) => [s.kind, s.label, s.depth]);
    expect(shape).toEqual([
      ["worker", "timeline-writer", 0],
      ["model", "model, turn:1", 1],
      ["tool", "fx_fetch", 1],
      ["model", "model, turn:2", 1],
      ...(timeline.spans[4]!.label === "fx_fetch"
        ? [
            ["tool", "fx_fetch", 1],
            ["tool", "timeline-helper", 1],
          ]
        : [
            ["tool", "timeline-helper", 1],
            ["tool", "fx_fetch", 1],
          ]),
      ["worker", "timeline-helper", 2],
      ["model", "model, turn:1", 3],
      ["model", "model, turn:3", 1],
      ["pause", "paused for approval", 0],
    ]);
    const [root, m1, post, m2] = timeline.spans;
    const helperTool = timeline.spans.find((s) => s.label === "timeline-helper" && s.kind === "tool")!;
    const read = timeline.spans.find((s, i) => i > 3 && s.label === "fx_fetch")!;
    const helperModel = timeline.spans.find((s) => s.depth === 3)!;
    const pause = timeline.spans.at(-1)!;
    for (const s of timeline.spans.filter((s) => s.kind === "model")) expect(ms(s), s.path).toBeGreaterThanOrEqual(25);
    expect(ms(helperModel)).toBeGreaterThanOrEqual(55);
    // Parallel calls overlap; the nested worker lies within the call that ran it; the pause lies between the post's request and its call.
    expect(overlap(read, helperTool)).toBe(true);
    expect(helperModel.start >= helperTool.start && helperModel.end <= helperTool.end).toBe(true);
    expect(pause.start >= m1!.end && pause.end <= post!.start && ms(pause)).toBeGreaterThanOrEqual(75);
    expect(m2!.start).toBeGreaterThanOrEqual(post!.end);
    expect(root).toMatchObject({ start: m1!.start, end: timeline.spans.at(-2)!.end });
    expect(timeline.totals.paused_ms).toBe(ms(pause));
    expect(timeline.totals.model_ms).toBe(timeline.spans.filter((s) => s.kind === "model").reduce((n, s) => n + ms(s), 0));
    expect(timeline.totals.wall_ms).toBe(done.updated_at - done.created_at);

    // The run page draws it, server-side: an SVG bar per span, no script for it.
    const page = await (await call(`/runs/${id}/view`)).text();
    const figure = page.slice(page.indexOf('<figure id="waterfall">'), page.indexOf("</figure>"));
    expect(figure).toContain("<svg");
    expect(figure.match(/<rect x=/g)).toHaveLength(timeline.spans.length);
    expect(figure).toContain('fill="#d97706"'); // the pause
    expect(figure).not.toContain("<script");
  });
});
