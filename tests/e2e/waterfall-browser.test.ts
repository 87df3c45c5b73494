import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, runBrowser } from "./browser";
import { callTree } from "../../src/engine/journal/call-tree";
import { modelKey, resultKey } from "../../src/engine/journal/keys";
import { runTimeline, type TimedStep } from "../../src/engine/journal/timeline";
import type { RunView } from "../../src/runs/types";
import { RunPage } from "../../src/views/run-page";

const SHOTS = process.env.EDGEWORK_SCREENSHOTS ?? "/tmp";

const answer = (calls: string[], text: string | null = null) => ({
  text,
  toolCalls: calls.map((name, i) => ({ id: `c${i}`, name, arguments: "{}" })),
  usage: { inputTokens: 10, outputTokens: 5 },
  model: "m",
  costUsd: 0,
});

/**
 * The journal of a run of `desk` with times (ms after T0): it posts (paused 1 s for
 * approval), then reads and asks the nested worker `helper` in parallel, then answers.
 */
const T0 = 1_764_000_000_000;
const turn2 = "desk/turn:2";
const steps: Array<[key: string, value: unknown, start: number | null, end: number]> = [
  [modelKey("desk", 1), answer(["post"]), 0, 400],
  ["desk/turn:1/tool:1/approval", { approved: true, by: "ada" }, null, 1400],
  [resultKey("desk/turn:1/tool:1"), { ok: true, value: "posted" }, 1400, 1600],
  [modelKey("desk", 2), answer(["read", "helper"]), 1600, 2000],
  [resultKey(`${turn2}/tool:1`), { ok: true, value: "read" }, 2000, 2300],
  [modelKey(`${turn2}/tool:2/helper`, 1), answer([], "helped"), 2050, 2700],
  [resultKey(`${turn2}/tool:2`), { ok: true, value: "helped" }, 2000, 2750],
  [modelKey("desk", 3), answer([], "done"), 2750, 3000],
];

function runView(): RunView {
  const tree = callTree(steps.map(([key, value]) => [key, value]));
  const timed: TimedStep[] = steps.map(([key, , start, end]) => ({ key, startedAt: start === null ? null : T0 + start, at: T0 + end }));
  const timeline = runTimeline(timed, tree, [{ start: T0 + 400, end: T0 + 1400, label: "paused for approval" }], { start: T0, end: T0 + 3000 });
  return {
    id: "r-waterfall",
    worker: "desk",
    status: "succeeded",
    attributes: {},
    input: {},
    output: "done",
    error: null,
    usage: null,
    approval_mode: "ask",
    trigger: { kind: "api" },
    created_at: T0,
    updated_at: T0 + 3000,
    catalog_version: null,
    edgework_version: null,
    resumed_under: null,
    approvals: [],
    waits: [],
    call_tree: tree,
    forked_from: null,
    parent: null,
    children: [],
    timeline,
    messages: [],
    answer_email_failures: [],
    compactions: [],
  };
}

type Win = {
  document: {
    querySelectorAll(
      s: string,
    ): ArrayLike<{ getBoundingClientRect(): { x: number; y: number; width: number; height: number }; closest(s: string): { getAttribute(n: string): string } }>;
  };
};

describe.skipIf(!runBrowser)("the run page's waterfall in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it("draws parallel tool calls, a pause and a nested worker as bars where their times put them, in their colours (screenshot checked)", async () => {
    const view = runView();
    const html = `<!doctype html>${String(await RunPage({ run: view, events: "" }))}`;
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    // No network, no script of ours: the waterfall is the server's SVG.
    await page.route("**/*", (route) => route.abort());
    await page.setContent(html);
    const figure = page.locator("#waterfall");
    const shot = await figure.screenshot();
    writeFileSync(join(SHOTS, "edgework-waterfall.png"), shot);

    const bars = await page.evaluate(() => {
      const doc = (globalThis as unknown as Win).document;
      return Array.from(doc.querySelectorAll("#waterfall g.span rect"), (r) => {
        const b = r.getBoundingClientRect();
        return { kind: r.closest("g").getAttribute("class").split(" ")[1]!, x: b.x, y: b.y, w: b.width, h: b.height };
      });
    });
    expect(bars.map((b) => b.kind)).toEqual(view.timeline.spans.map((s) => s.kind));
    const at = (label: string, kind: string) => bars[view.timeline.spans.findIndex((s) => s.label === label && s.kind === kind)]!;
    const [read, helperTool, helperWorker, pause, post] = [
      at("read", "tool"),
      at("helper", "tool"),
      at("helper", "worker"),
      at("paused for approval", "pause"),
      at("post", "tool"),
    ];
    // Parallel calls overlap on the time axis; the nested worker lies within its call; the pause ends where the post starts.
    expect(read.x < helperTool.x + helperTool.w && helperTool.x < read.x + read.w).toBe(true);
    expect(helperWorker.x >= helperTool.x - 0.5 && helperWorker.x + helperWorker.w <= helperTool.x + helperTool.w + 0.5).toBe(true);
    expect(Math.abs(pause.x + pause.w - post.x)).toBeLessThan(1);
    expect(pause.w / (bars[0]!.w || 1)).toBeCloseTo(1000 / 3000, 1);

    // The screenshot's pixel at the middle of each bar has its kind's colour.
    const box = (await figure.boundingBox())!;
    const colours = await page.evaluate(
      async ({ png, points }) => {
        const g = globalThis as unknown as {
          Image: new () => { src: string; decode(): Promise<void>; width: number; height: number };
          document: {
            createElement(t: "canvas"): {
              width: number;
              height: number;
              getContext(c: "2d"): {
                drawImage(i: unknown, x: number, y: number): void;
                getImageData(x: number, y: number, w: number, h: number): { data: number[] };
              };
            };
          };
        };
        const img = new g.Image();
        img.src = `data:image/png;base64,${png}`;
        await img.decode();
        const canvas = g.document.createElement("canvas");
        canvas.width = img.width;
        canvas.height = img.height;
        const ctx = canvas.getContext("2d");
        ctx.drawImage(img, 0, 0);
        return points.map(([x, y]) => Array.from(ctx.getImageData(Math.round(x!), Math.round(y!), 1, 1).data.slice(0, 3)));
      },
      { png: shot.toString("base64"), points: bars.map((b) => [b.x - box.x + b.w / 2, b.y - box.y + b.h / 2]) },
    );
    const rgb = { worker: [0x6b, 0x72, 0x80], model: [0x25, 0x63, 0xeb], tool: [0x05, 0x96, 0x69], pause: [0xd9, 0x77, 0x06] } as Record<string, number[]>;
    colours.forEach((c, i) => {
      for (let k = 0; k < 3; k++) expect(Math.abs(c[k]! - rgb[bars[i]!.kind]![k]!), `${view.timeline.spans[i]!.label} ${c}`).toBeLessThanOrEqual(3);
    });
    await page.close();
  });
});
