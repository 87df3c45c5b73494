import { describe, expect, it } from "vitest";
import { parseYaml } from "../../src/build/yaml";
import { loadApp } from "../../src/catalog";
import { decide } from "../../src/triggers/flow/decide";
import { keyValues } from "../../src/triggers/flow/key";
import { rateCheck } from "../../src/triggers/flow/rate";
import { messageText } from "../../src/triggers/flow/message-text";

const WORKERS = {
  "workers/triage.worker": `---
name: triage
input: { type: object, properties: { repo: { type: string }, number: { type: integer }, title: { type: string } }, required: [repo] }
---
Triage.`,
  "workers/batcher.worker": `---
name: batcher
input: { type: object, properties: { batch: { type: array, items: { type: object, properties: { title: { type: string } } } } }, required: [batch] }
---
Batches.`,
};

const HEAD = `
  verify: { scheme: github, secret_env: GITHUB_WEBHOOK_SECRET }
  input: { repo: /repository/full_name }`;

/** The problems `loadApp` reports for one trigger `t` with `lines` added ([] when it loads). */
function problems(lines: string, worker = "triage", head = HEAD): string[] {
  try {
    loadApp({ ...WORKERS, "workers/triggers.yaml": `t:\n  worker: ${worker}${head}\n${lines}` }, parseYaml);
    return [];
  } catch (err) {
    return (err as Error).message
      .split("\n")
      .slice(1)
      .map((l) => l.trim());
  }
}

describe("triggers.yaml: flow control, every field bounded", () => {
  it("loads the docs' example, defaults applied (on_busy: queue, over: refuse, batch: false)", () => {
    const app = loadApp(
      {
        ...WORKERS,
        "workers/triggers.yaml": `
github-issues:
  worker: triage
  verify: { scheme: github, secret_env: GITHUB_WEBHOOK_SECRET }
  key: [/repository/full_name, /issue/number]
  concurrency: { limit: 2 }
  debounce: 30s
  rate: 10/min
  input: { repo: /repository/full_name, number: /issue/number, title: /issue/title }
  notify_url: "https://hooks.example.com/edgework?team=\${TEAM}"
`,
      },
      parseYaml,
    );
    expect(app.triggers.get("github-issues")).toMatchObject({
      key: ["/repository/full_name", "/issue/number"],
      concurrency: { limit: 2, on_busy: "queue" },
      debounce: { after: 30_000, batch: false },
      rate: { limit: 10, periodMs: 60_000, over: "refuse" },
      notify_url: "https://hooks.example.com/edgework?team=${TEAM}",
    });
  });

  it.each([
    ["six key pointers", "  key: [/a, /b, /c, /d, /e, /f]\n  concurrency: { limit: 1 }", /t\.key: .*(5|too big)/i],
    ["a key that is not a pointer", "  key: [issue]\n  concurrency: { limit: 1 }", /t\.key\.0: must be a JSON pointer/],
    ["a pointer of 300 characters", `  key: [/${"a".repeat(300)}]\n  concurrency: { limit: 1 }`, /t\.key\.0/],
    ["a key alone", "  key: [/issue/number]", /t\.key: a key takes effect with concurrency, debounce or rate/],
    ["a limit of 0", "  concurrency: { limit: 0 }", /t\.concurrency\.limit/],
    ["a limit of 101", "  concurrency: { limit: 101 }", /t\.concurrency\.limit/],
    ["an unknown on_busy", "  concurrency: { limit: 1, on_busy: drop }", /t\.concurrency\.on_busy/],
    ["a message with limit 2", "  concurrency: { limit: 2, on_busy: message }", /t\.concurrency\.limit: on_busy: message or \{event\}/],
    ["an event name with a space", '  concurrency: { limit: 1, on_busy: { event: "a b" } }', /t\.concurrency\.on_busy/],
    ["a debounce of 0s", "  debounce: 0s", /t\.debounce/],
    ["a debounce of 2 days", "  debounce: 2d", /t\.debounce/],
    ["a debounce in words", "  debounce: soon", /t\.debounce/],
    ["a max_wait shorter than after", "  debounce: { after: 1m, max_wait: 30s }", /t\.debounce\.max_wait: must be at least `after`/],
    ["a batch for a worker without a batch input", "  debounce: { after: 5s, batch: true }", /t\.debounce\.batch: a batched run's input is \{batch/],
    ["a rate of 0", "  rate: 0/min", /t\.rate/],
    ["a rate per fortnight", "  rate: 10/fortnight", /t\.rate/],
    ["a rate of a million", "  rate: 1000000/s", /t\.rate/],
    ["a rate with another over", "  rate: { limit: 10/min, over: drop }", /t\.rate/],
    ["a notify URL with credentials", '  notify_url: "https://u:p@hooks.example.com/"', /t\.notify_url: carries credentials/],
    ["a notify URL of another scheme", '  notify_url: "javascript:alert(1)"', /t\.notify_url: the scheme is javascript:/],
    ["a notify_on of anything", "  notify_on: [always]", /t\.notify_on/],
  ])("refuses %s, naming the field", (_what, lines, expected) => {
    expect(problems(lines).join("\n")).toMatch(expected);
  });

  it("on_busy: message needs an LLM worker; a batched debounce maps its input onto the batch's items", () => {
    expect(
      problems(
        "  debounce: { after: 5s, batch: true }",
        "batcher",
        `\n  verify: { scheme: github, secret_env: GITHUB_WEBHOOK_SECRET }\n  input: { title: /issue/title }`,
      ),
    ).toEqual([]);
    expect(
      problems(
        "  debounce: { after: 5s, batch: true }",
        "batcher",
        `\n  verify: { scheme: github, secret_env: GITHUB_WEBHOOK_SECRET }\n  input: { repo: /r }`,
      ).join(),
    ).toMatch(/t\.input\.repo: worker "batcher" has no input field "repo" in its batch's items/);
  });
});

describe("a delivery's key, decision and rate (pure)", () => {
  it("reads each pointer's value, bounded; a missing, null, object or overlong value is no key", () => {
    const payload = { repository: { full_name: "octo/api" }, issue: { number: 7, locked: false, labels: [], user: {}, title: "x".repeat(257), empty: "" } };
    expect(keyValues(["/repository/full_name", "/issue/number", "/issue/locked"], payload)).toEqual({ values: ["octo/api", 7, false] });
    expect(keyValues(undefined, payload)).toEqual({ values: [] });
    for (const [pointer, error] of [
      ["/issue/missing", /missing from the payload/],
      ["/issue/labels", /an array/],
      ["/issue/user", /an object/],
      ["/issue/title", /257 characters, over 256/],
      ["/issue/empty", /empty string/],
    ] as const)
      expect((keyValues([pointer], payload) as { error: string }).error).toMatch(error);
    expect((keyValues(["/issue/number"], null) as { error: string }).error).toMatch(/missing/);
  });

  it("decides by the key's runs: start below the limit; else queue, skip, replace the oldest, message or event the newest; the rate holds back what reaches a run", () => {
    const busy = ["r1", "r2"];
    const flow = (on_busy: "queue" | "skip" | "replace" | "message" | { event: string }) => ({ concurrency: { limit: 2, on_busy } });
    expect(decide(flow("queue"), ["r1"], undefined)).toEqual({ act: "start" });
    expect(decide(flow("queue"), busy, undefined)).toEqual({ act: "wait" });
    expect(decide(flow("skip"), busy, { ok: false, at: 9 })).toEqual({ act: "skip", run: "r2" });
    expect(decide(flow("replace"), busy, undefined)).toEqual({ act: "start", cancel: "r1" });
    expect(decide(flow("message"), busy, undefined)).toEqual({ act: "message", run: "r2" });
    expect(decide(flow({ event: "e" }), busy, { ok: false, at: 9 })).toEqual({ act: "wait", until: 9 });
    expect(decide({}, busy, undefined)).toEqual({ act: "start" });
  });

  it("GCRA: a burst of `limit`, then one per period/limit", () => {
    const rate = { limit: 3, periodMs: 60_000 };
    let tat: number | undefined;
    for (let i = 0; i < 3; i++) {
      const r = rateCheck(rate, tat, 0);
      expect(r.ok).toBe(true);
      tat = (r as { tat: number }).tat;
    }
    expect(rateCheck(rate, tat, 0)).toEqual({ ok: false, at: 20_000 });
    expect(rateCheck(rate, tat, 20_000).ok).toBe(true);
  });

  it("a message is an input of one string field, else its JSON", () => {
    expect(messageText({ text: "hi" })).toBe("hi");
    expect(messageText({ title: "a", seq: 2 })).toBe('{"title":"a","seq":2}');
  });
});
