import { describe, expect, it } from "vitest";
import * as z from "zod";
import { parseYaml } from "../../src/build/yaml";
import { defineToolset, tool, toolsetRegistry, type Model } from "../../src/engine";
import { argsMismatch, literalPattern } from "../../src/evals/args-pattern";
import { evalSuiteOf } from "../../src/evals/from-run";
import type { RunView } from "../../src/runs/types";
import { lineDiff } from "../../src/evals/diff";
import { escapeXml } from "../../src/evals/report";
import { junitXml, parseSuite, runSuite, summarize, type EvalEnv } from "../../src/evals";
import { startModelServer } from "../../src/testing/model-server";
import { junitProblems, parseXml } from "./junit-shape";

/** A kind whose one tool asks for approval and counts the calls that really ran. */
function effectKind() {
  const ran: unknown[] = [];
  const kind = defineToolset({
    kind: "effect",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      send: tool({
        description: "Send a message somewhere",
        input: z.strictObject({ to: z.string(), text: z.string() }),
        run: (args) => {
          ran.push(args);
          return { sent: true, real: "real-result" };
        },
      }),
    },
  });
  return { kind, ran };
}

const WORKERS = {
  "workers/mailer.worker":
    "---\nname: mailer\ndescription: Sends.\nmodel: test:priced\nmax_turns: 5\ntoolsets:\n  fx: { use: effect }\n---\nSend what you are asked to send.\n",
  "workers/models.yaml": 'prices:\n  "test:priced": { input: 1000, output: 1000 }\n',
};

function env(models: Record<string, Model> = {}) {
  const fx = effectKind();
  const e: EvalEnv = { files: WORKERS, kinds: toolsetRegistry(fx.kind), parse: parseYaml, vars: {}, models };
  return { env: e, ran: fx.ran };
}

const suite = (yaml: string) => parseSuite("evals/t.yaml", yaml, parseYaml);

/** One scripted case: send once, then answer — with what the tool answered, when it says `stub-result` or `real-result`. */
const SEND_CASE = `
    input: { input: go }
    script:
      mailer:
        - tool_calls: [{ name: fx_send, arguments: { to: ops, text: hi } }]
        - if_asked: stub-result
          text: saw the stub
          otherwise:
            text: saw no stub`;

describe("evals: stubs, approvals and the real tool", () => {
  it("a stub answers instead of the tool; an unstubbed call runs the tool; under the default reject_all neither runs", async () => {
    const { env: e, ran } = env();
    const s = suite(`
worker: mailer
cases:
  - name: stubbed
    approval_mode: approve_all
    tools: { fx_send: { args: { to: ops }, result: stub-result } }${SEND_CASE}
    checks: [{ output_equals: saw the stub }, { tool_called: { name: fx_send, args: { to: "o*", text: hi } } }]
  - name: real
    approval_mode: approve_all${SEND_CASE}
    checks: [{ output_equals: saw no stub }]
  - name: rejected by default
    tools: { fx_send: { result: stub-result } }${SEND_CASE}
    checks: [{ output_equals: saw no stub }]
  - name: no stub matches these arguments
    approval_mode: approve_all
    tools: { fx_send: [{ args: { to: "dev*" }, result: stub-result }] }${SEND_CASE}
    checks: [{ output_equals: saw the stub }]
`);
    const [stubbed, real, rejected, unmatched] = (await runSuite(s, e)).cases;
    expect(stubbed).toMatchObject({ pass: true });
    expect(real).toMatchObject({ pass: true });
    expect(rejected).toMatchObject({ pass: true });
    expect(unmatched!.pass).toBe(false);
    // The tool ran once: for the unstubbed case only.
    expect(ran).toEqual([{ to: "ops", text: "hi" }]);
  });

  it("a stub takes only arguments the tool would take", async () => {
    const { env: e } = env();
    const s = suite(`
worker: mailer
cases:
  - name: bad args
    approval_mode: approve_all
    tools: { fx_send: { result: stub-result } }
    input: { input: go }
    script:
      mailer:
        - tool_calls: [{ name: fx_send, arguments: { to: 7 } }]
        - if_asked: "invalid arguments for send"
          text: refused
          otherwise: { text: accepted }
    checks: [{ output_equals: refused }]
`);
    expect((await runSuite(s, e)).cases[0]).toMatchObject({ pass: true });
  });

  it("a bare string is the input of a worker with the default input schema, as POST /runs takes it", async () => {
    const { env: e } = env();
    const s = suite(`
worker: mailer
cases:
  - name: bare string
    input: go now
    script:
      mailer:
        - if_asked: "go now"
          text: read it
          otherwise: { text: did not }
    checks: [{ output_equals: read it }]
`);
    expect((await runSuite(s, e)).cases[0]).toMatchObject({ pass: true, status: "succeeded" });
  });
});

describe("evals: checks that fail say why", () => {
  it("turns, tokens, cost, schema, a forbidden call and the run's status", async () => {
    const { env: e } = env();
    const s = suite(`
worker: mailer
cases:
  - name: over every bound
    approval_mode: approve_all
    tools: { fx_send: { result: ok } }${SEND_CASE}
    checks:
      - max_turns: 1
      - max_tokens: 10
      - max_cost_usd: 0.0001
      - output_schema: { type: object }
      - tool_not_called: { name: fx_send, args: { to: ops } }
      - status: failed
`);
    const [c] = (await runSuite(s, e)).cases;
    const details = Object.fromEntries(c!.checks.map((r) => [r.check, r.detail]));
    expect(c!.pass).toBe(false);
    expect(c!.checks.every((r) => !r.pass)).toBe(true);
    expect(details.max_turns).toBe("mailer took 2 turns, over 1");
    expect(details.max_tokens).toMatch(/^the run used \d+ tokens, over 10$/);
    expect(details.max_cost_usd).toMatch(/^the run cost \$0\.\d+, over \$0\.0001$/);
    expect(c!.costUsd).toBeGreaterThan(0.0001);
    expect(details.output_schema).toContain("the output does not match the schema");
    expect(details["tool_not_called fx_send"]).toContain('expected no call of fx_send with args matching {"to":"ops"}, got 1');
    expect(details.status).toBe("expected the run to end failed, it ended succeeded");
  });

  it("a run that outlasts timeout_s fails its case; a case without a status check expects success", async () => {
    const never: Model = { request: () => new Promise(() => {}) };
    const { env: e } = env({ "test:never": never });
    const s = suite(`
worker: mailer
model: test:never
timeout_s: 0.05
cases: [{ name: hangs, input: { input: go } }]
`);
    const [c] = (await runSuite(s, e)).cases;
    expect(c).toMatchObject({ pass: false, status: "error" });
    expect(c!.checks[0]).toEqual({
      check: "status",
      pass: false,
      detail: "expected the run to end succeeded, it ended error: the run took over 0.05s (timeout_s)",
    });
  });

  it("a run past timeout_s takes no further step: no more model requests are spent on it", async () => {
    let requests = 0;
    // Slow, and never done: each answer asks for another turn.
    const slow: Model = {
      async request() {
        requests++;
        await new Promise((r) => setTimeout(r, 80));
        return { text: null, toolCalls: [{ id: `c${requests}`, name: "nope", arguments: "{}" }], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const { env: e } = env({ "test:slow": slow });
    const [c] = (await runSuite(suite("worker: mailer\nmodel: test:slow\ntimeout_s: 0.05\ncases: [{ name: slow, input: { input: go } }]"), e)).cases;
    expect(c!.status).toBe("error");
    await new Promise((r) => setTimeout(r, 400));
    expect(requests).toBe(1);
  });

  it("rubric: a judge that answers no verdict, or no judge at all, fails the check naming why", async () => {
    const { env: e } = env();
    const s = suite(`
worker: mailer
judges:
  test:babbler: { text: "I think it is fine" }
cases:
  - name: judged
    input: { input: go }
    script: { mailer: [{ text: done }] }
    checks:
      - rubric: { criteria: Says done., judge: test:babbler }
      - rubric: { criteria: Says done. }
`);
    const [c] = (await runSuite(s, e)).cases;
    expect(c!.checks.slice(1).map((r) => r.detail)).toEqual([
      "could not check: judge test:babbler did not answer JSON: I think it is fine",
      "no judge: name one on the check (judge:) or the suite",
    ]);
  });

  it("runs at most `concurrency` cases at once", async () => {
    let running = 0;
    let most = 0;
    const slow: Model = {
      async request() {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        return { text: "done", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const { env: e } = env({ "test:slow": slow });
    const cases = Array.from({ length: 6 }, (_, i) => `  - { name: c${i}, input: { input: go } }`).join("\n");
    const result = await runSuite(suite(`worker: mailer\nmodel: test:slow\nconcurrency: 2\ncases:\n${cases}`), e);
    expect(result.cases.every((c) => c.pass)).toBe(true);
    expect(most).toBe(2);
  });
});

describe("evals: argument patterns are matched without a regex from the file", () => {
  it("objects by the keys named, arrays element by element, globs and literals", () => {
    const args = { method: "POST", url: "https://x/issues/7/labels", body: '{"labels":["bug"]}', n: 3, tags: ["a", "b"] };
    expect(argsMismatch({ method: "POST", url: "*/labels", body: '*"bug"*' }, args)).toBeUndefined();
    expect(argsMismatch({ tags: ["a", "?"], n: 3 }, args)).toBeUndefined();
    expect(argsMismatch({ url: "*/comments" }, args)).toBe('args.url: "https://x/issues/7/labels" does not match "*/comments"');
    expect(argsMismatch({ n: "3" }, args)).toBe('args.n: expected "3", got 3');
    expect(argsMismatch({ tags: ["a"] }, args)).toBe('args.tags: expected an array of 1, got ["a","b"]');
    expect(argsMismatch({ missing: "*" }, args)).toBe('args.missing: expected a string matching "*", got nothing');
  });

  it("a glob of many stars against a long text answers at once (a backtracking regex would not); an over-long glob is a mismatch, not a throw", () => {
    const text = "a".repeat(50_000);
    const t0 = performance.now();
    expect(argsMismatch(`${"*a".repeat(100)}b`, text)).toContain("does not match");
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(argsMismatch("*", "a".repeat(200_001))).toBe("args: 200001 characters, over the 200000 a glob is matched against");
    expect(argsMismatch("*".repeat(300), "x")).toMatch(/^args: the glob "\*+… is 300 characters, over the 256 a glob may have$/);
  });

  it("a backslash makes `*`, `?` and itself literal; a string with nothing else wild is compared as text, however long", () => {
    expect(argsMismatch({ url: "*/x\\?p=1" }, { url: "https://h/x?p=1" })).toBeUndefined();
    expect(argsMismatch({ url: "*/x\\?p=1" }, { url: "https://h/xZp=1" })).toBe('args.url: "https://h/xZp=1" does not match "*/x\\\\?p=1"');
    const long = `https://h/x?${"q=1&".repeat(100)}`;
    const values = ["https://h/x?p=1", long, "a\\*b\\\\?c", "*", "\\", ""];
    for (const v of values) {
      expect(argsMismatch(literalPattern(v), v)).toBeUndefined();
      expect(argsMismatch(literalPattern(v), `${v}Z`)).toMatch(/^args: expected "/);
    }
    expect(argsMismatch(literalPattern("https://h/x?p=1"), "https://h/xZp=1")).toBe('args: expected "https://h/x?p=1", got "https://h/xZp=1"');
    expect(literalPattern({ a: ["x*", 1, null], "k?": "y" })).toEqual({ a: ["x\\*", 1, null], "k?": "y" });
  });
});

describe("evals: a case from a run replays the recorded arguments literally", () => {
  /** A run of mailer that sent once, with these arguments, and got `sent`. */
  const recorded = (args: unknown): RunView =>
    ({
      id: "r1",
      worker: "mailer",
      status: "succeeded",
      input: { input: "go" },
      call_tree: {
        worker: "mailer",
        path: "mailer",
        turns: 2,
        usage: {},
        tools: [{ id: "1", name: "fx_send", path: "p", args, status: "ok", result: '"sent"', calls: [] }],
      },
    }) as unknown as RunView;

  /** The exported case, replayed by a script that sends `args`: what the stub answered, and whether the tool really ran. */
  async function replay(recordedArgs: unknown, args: unknown) {
    const { env: e, ran } = env();
    const s = evalSuiteOf(recorded(recordedArgs)) as { cases: Array<Record<string, unknown>> };
    s.cases[0]!.script = {
      mailer: [{ tool_calls: [{ name: "fx_send", arguments: args }] }, { if_asked: "sent", text: "stubbed", otherwise: { text: "not stubbed" } }],
    };
    s.cases[0]!.checks = [{ output_equals: "stubbed" }];
    const [c] = (await runSuite(suite(JSON.stringify(s)), e)).cases;
    return { pass: c!.pass, ran };
  }

  it("a recorded URL with `?` answers only that URL, not one with another character there", async () => {
    const url = "https://h/x?p=1";
    expect(await replay({ to: url, text: "hi" }, { to: url, text: "hi" })).toEqual({ pass: true, ran: [] });
    expect(await replay({ to: url, text: "hi" }, { to: "https://h/xZp=1", text: "hi" })).toEqual({ pass: false, ran: [] });
  });

  it("a recorded value of 256+ characters with `?` in it is matched as text (no RangeError from the glob matcher)", async () => {
    const text = `is it done? ${"x".repeat(300)}`;
    expect(await replay({ to: "ops", text }, { to: "ops", text })).toEqual({ pass: true, ran: [] });
  });
});

describe("evals: reports", () => {
  it("a line diff shows what was expected, then what came", () => {
    expect(lineDiff("a\nb\nc", "a\nx\nc")).toBe("  a\n- b\n+ x\n  c");
  });

  it("JUnit escapes hostile case names and details (markup, entities, control characters) and still validates", () => {
    const hostile = 'x</failure><testcase name="forged">&amp;\u0001\u001b]]>';
    const report = summarize([
      {
        file: "evals/h.yaml",
        threshold: 1,
        cases: [
          {
            suite: "evals/h.yaml",
            name: hostile,
            worker: "w",
            pass: false,
            status: "failed",
            checks: [{ check: "status", pass: false, detail: hostile }],
            turns: 1,
            tokens: 2,
            costUsd: 0,
            ms: 5,
          },
        ],
      },
    ]);
    const root = parseXml(junitXml(report, new Date(0)));
    expect(junitProblems(root)).toEqual([]);
    const tc = root.children[0]!.children[1]!;
    expect(tc.attrs.name).toBe('x</failure><testcase name="forged">&amp;]]>');
    expect(tc.children[0]!.text).toContain('x</failure><testcase name="forged">&amp;]]>');
    expect(escapeXml("\u0000a\tb\n")).toBe("a\tb\n");
  });

  it("the JUnit shape check refuses what the XSD refuses", () => {
    const good = junitXml(summarize([{ file: "evals/a.yaml", threshold: 1, cases: [] }]), new Date(0));
    expect(junitProblems(parseXml(good))).toEqual([]);
    expect(junitProblems(parseXml(good.replace(' hostname="localhost"', "")))).toEqual(["<testsuite> lacks required attribute hostname"]);
    expect(junitProblems(parseXml(good.replace("    <properties/>\n", "")))).toEqual(["<testsuite> children out of the XSD's sequence: system-out system-err"]);
    expect(junitProblems(parseXml(good.replace('name="evals/a.yaml" tests="0"', 'name="evals/a.yaml" tests="1"')))).toContain('tests="1" but 0 <testcase>');
    expect(() => parseXml(good.replace("<properties/>", "<properties>"))).toThrow("</testsuite> closes <properties>");
  });
});

describe("evals: a real model through a models.yaml provider", () => {
  it("asks the provider's endpoint with its key from vars, for the worker and for the judge, and prices the run from models.yaml", async () => {
    const server = await startModelServer();
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const put = (id: string, replies: unknown[]) => fetch(`${base}/scripts/${id}`, { method: "PUT", body: JSON.stringify(replies) });
      await put("worker-model", [{ text: "hello from the provider", usage: { prompt_tokens: 1000, completion_tokens: 1000 } }]);
      await put("judge-model", [{ text: '{"pass": true, "score": 1, "reason": "greets"}' }]);
      const fx = effectKind();
      const files = {
        "workers/greeter.worker": "---\nname: greeter\ndescription: Greets.\n---\nGreet the user.\n",
        "workers/models.yaml":
          'providers:\n  local: { base_url: "${LOCAL_URL}/v1", api_key: "${LOCAL_KEY}" }\nprices:\n  "local:worker-model": { input: 1, output: 1 }\n',
      };
      const e: EvalEnv = { files, kinds: toolsetRegistry(fx.kind), parse: parseYaml, vars: { LOCAL_URL: base } };
      const s = suite(`
worker: greeter
model: local:worker-model
judge: local:judge-model
vars: { LOCAL_KEY: sk-local }
cases:
  - name: greets
    input: { input: hi }
    checks: [{ output_equals: hello from the provider }, { rubric: { criteria: Greets. } }, { max_cost_usd: 0.01 }]
`);
      const [c] = (await runSuite(s, e)).cases;
      expect(c!.checks).toEqual([
        { check: "status", pass: true },
        { check: "output_equals", pass: true },
        { check: "rubric", pass: true },
        { check: "max_cost_usd", pass: true },
      ]);
      expect(c!.costUsd).toBeCloseTo(0.002, 6);
      const asked = async (id: string) => (await (await fetch(`${base}/scripts/${id}`)).json()) as { requests: any[]; authorizations: string[] };
      const worker = await asked("worker-model");
      expect(worker.authorizations).toEqual(["Bearer sk-local"]);
      expect(worker.requests[0].messages[0].content).toContain("Greet the user.");
      const judge = await asked("judge-model");
      expect(judge.requests[0].messages[1].content).toContain("Output:\nhello from the provider");
    } finally {
      await server.close();
    }
  });
});
