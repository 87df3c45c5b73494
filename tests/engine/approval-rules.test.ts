import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CatalogError,
  defineFunction,
  defineToolset,
  executeRun,
  files,
  http,
  loadCatalog,
  MemoryJournalStore,
  scriptedModel,
  tool,
  toolsetRegistry,
  type ApprovalDecision,
  type ModelRequest,
  type PendingApproval,
  type ScriptedReply,
} from "../../src/engine";
import { parseYaml } from "../../src/build/yaml";
import { Journal } from "../../src/engine/journal/journal";
import { approvalKey, approvalRuleKey, resultKey } from "../../src/engine/journal/keys";
import type { ApprovalCheck } from "../../src/engine/types/toolset";
import { approvalGated, rememberedApprovals } from "../../src/engine/toolsets/wrappers/approval";
import { bareContext } from "./toolsets/toolset.case";
import { harness, workerFile } from "./helpers";

const toolResults = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));
type Paused = { status: "awaiting_approval"; pending: PendingApproval[] };

/** A shop whose tools record what ran: `request(method, path)`, `refund(charge, amount)`, and `check(n)` gated by `needs`. */
function shop(needs?: (args: { n: number }, check: ApprovalCheck) => unknown) {
  const ran: string[] = [];
  const seen: Array<{ args: unknown; check: ApprovalCheck }> = [];
  const kind = defineToolset({
    kind: "shop",
    config: z.strictObject({}),
    create: () => ({}),
    tools: {
      request: tool({
        description: "An API request",
        input: z.strictObject({ method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("GET"), path: z.string() }),
        run: ({ method, path }) => (ran.push(`${method} ${path}`), "done"),
      }),
      refund: tool({
        description: "Refunds a charge",
        input: z.strictObject({ charge: z.string(), amount: z.number() }),
        run: ({ charge, amount }) => (ran.push(`refund ${charge} ${amount}`), "refunded"),
      }),
      check: tool({
        description: "Decides in code",
        input: z.strictObject({ n: z.number() }),
        ...(needs
          ? {
              needsApproval: (args: { n: number }, check: ApprovalCheck) => {
                seen.push({ args, check });
                return needs(args, check) as boolean;
              },
            }
          : {}),
        run: ({ n }) => (ran.push(`check ${n}`), "checked"),
      }),
    },
  });
  return { kind, ran, seen };
}

const RULES = `
approval:
  request: { ask_when: { method: [POST, PUT, PATCH, DELETE] }, otherwise: allow }
  refund: { ask_when: { amount: { gt: 100 } }, otherwise: allow, ask: [finance@example.com] }
  notify: ops@example.com`;

function setup(approval: string, turns: ScriptedReply[], needs?: Parameters<typeof shop>[0]) {
  const s = shop(needs);
  // By turn, not by request: a replay asks the model only for the turns its journal lacks.
  const model = scriptedModel((req) => turns[req.messages.filter((m) => m.role === "assistant").length] ?? { text: `done: ${toolResults(req).join(" | ")}` });
  const h = harness(
    { "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  shop: { use: shop }\n${approval}`) },
    { kinds: [s.kind], models: { "test:m": model } },
  );
  return { ...s, h, model };
}
const run = (h: ReturnType<typeof setup>["h"], store: MemoryJournalStore, runId = "r1") => h.run({ worker: "w", input: { input: "x" }, runId }, store);
const decide = (store: MemoryJournalStore, key: string, d: ApprovalDecision) => store.put(key, d);

describe("approval rules on the arguments, in a run", () => {
  it("GET runs without asking and POST asks under ask_when {method: [POST, …]}; the approval names its rule; approved, it runs", async () => {
    const t = setup(RULES, [
      {
        toolCalls: [
          { name: "request", args: { method: "GET", path: "/a" } },
          { name: "request", args: { path: "/b" } },
          { name: "request", args: { method: "POST", path: "/c" } },
        ],
      },
    ]);
    const store = new MemoryJournalStore();
    const first = (await run(t.h, store)) as Paused;
    expect(first.status).toBe("awaiting_approval");
    expect(t.ran).toEqual(["GET /a", "GET /b"]); // a method left out is the input's default, GET
    expect(first.pending).toEqual([
      expect.objectContaining({
        key: "w/turn:1/tool:3/approval",
        args: { method: "POST", path: "/c" },
        description: 'w wants to call request (ask_when method in ["POST","PUT","PATCH","DELETE"])',
        notify: "ops@example.com",
      }),
    ]);
    expect(store.entries.get(approvalRuleKey("w/turn:1/tool:3"))).toMatchObject({
      rule: 'ask_when method in ["POST","PUT","PATCH","DELETE"]',
      name: "request",
    });
    // No rule step for calls that did not ask.
    expect(store.entries.has(approvalRuleKey("w/turn:1/tool:1"))).toBe(false);

    await decide(store, "w/turn:1/tool:3/approval", { approved: true, by: "ops" });
    expect(await run(t.h, store)).toMatchObject({ status: "succeeded", output: "done: done | done | done" });
    expect(t.ran).toEqual(["GET /a", "GET /b", "POST /c"]);
  });

  it("outside the http kind a value is compared exactly, case and all: deny_when charge ch_BAD does not match ch_bad (documented)", async () => {
    const t = setup("approval:\n  refund: { deny_when: { charge: ch_BAD }, otherwise: allow }", [
      { toolCalls: [{ name: "refund", args: { charge: "ch_bad", amount: 1 } }] },
      { toolCalls: [{ name: "refund", args: { charge: "ch_BAD", amount: 2 } }] },
    ]);
    const out = (await run(t.h, new MemoryJournalStore())) as { status: string; output: string };
    expect(out.status).toBe("succeeded");
    expect(t.ran).toEqual(["refund ch_bad 1"]);
    expect(out.output).toContain("denied by the approval policy");
  });

  it("an approver's edit never gets past a deny rule: edited into what deny_when matches, the call is denied and never runs", async () => {
    const t = setup("approval:\n  request: { deny_when: { method: DELETE }, otherwise: ask }\n  notify: ops@example.com", [
      { toolCalls: [{ name: "request", args: { method: "POST", path: "/c" } }] },
    ]);
    const store = new MemoryJournalStore();
    expect(((await run(t.h, store)) as Paused).status).toBe("awaiting_approval");
    await decide(store, "w/turn:1/tool:1/approval", { approved: true, by: "ops", args: { method: "DELETE", path: "/c" } });
    expect(await run(t.h, store)).toMatchObject({
      status: "succeeded",
      output:
        'done: [A person edited this call\'s arguments before approving it; it was called with {"method":"DELETE","path":"/c"}.]\n' +
        'Error: the edited call to request is denied by the approval policy of worker "w" (deny_when method = "DELETE")',
    });
    expect(t.ran).toEqual([]);
  });

  it("amount {gt: 100} asks at 150 (of the people its policy names) and not at 50", async () => {
    const t = setup(RULES, [
      {
        toolCalls: [
          { name: "refund", args: { charge: "ch_1", amount: 150 } },
          { name: "refund", args: { charge: "ch_2", amount: 50 } },
        ],
      },
    ]);
    const first = (await run(t.h, new MemoryJournalStore())) as Paused;
    expect(first.pending).toEqual([
      expect.objectContaining({
        args: { charge: "ch_1", amount: 150 },
        description: "w wants to call refund (ask_when amount > 100)",
        deciders: { ask: ["finance@example.com"] },
      }),
    ]);
    expect(t.ran).toEqual(["refund ch_2 50"]);
  });

  it("deny_when refuses the calls it matches: the model reads why, the tool never runs; the others follow otherwise", async () => {
    const t = setup("approval:\n  request: { deny_when: [{ method: DELETE }, { path: /admin }], otherwise: allow }", [
      {
        toolCalls: [
          { name: "request", args: { method: "DELETE", path: "/a" } },
          { name: "request", args: { method: "POST", path: "/admin" } },
          { name: "request", args: { method: "POST", path: "/b" } },
        ],
      },
    ]);
    const out = await run(t.h, new MemoryJournalStore());
    expect(out).toMatchObject({
      status: "succeeded",
      output:
        'done: Error: tool "request" is denied by the approval policy of worker "w" (deny_when method = "DELETE") | ' +
        'Error: tool "request" is denied by the approval policy of worker "w" (deny_when path = "/admin") | done',
    });
    expect(t.ran).toEqual(["POST /b"]);
  });

  it("hostile arguments fail closed: a string or missing amount asks (saying why); under deny_when it is denied", async () => {
    const calls: ScriptedReply[] = [
      {
        toolCalls: [
          { name: "refund", args: { charge: "ch_1", amount: "150" } },
          { name: "refund", args: { charge: "ch_2" } },
          { name: "refund", args: { charge: "ch_3", amount: { gt: 0 } } },
        ],
      },
    ];
    const asks = setup(RULES, calls);
    const paused = (await run(asks.h, new MemoryJournalStore())) as Paused;
    expect(paused.pending.map((p) => p.description)).toEqual([
      "w wants to call refund (ask_when amount > 100; amount is a string, not a number)",
      "w wants to call refund (ask_when amount > 100; amount is absent)",
      "w wants to call refund (ask_when amount > 100; amount is an object, not a number)",
    ]);
    const denies = setup("approval:\n  refund: { deny_when: { amount: { gt: 1000 } }, otherwise: allow }", calls);
    const out = await run(denies.h, new MemoryJournalStore());
    expect(out).toMatchObject({ status: "succeeded" });
    expect((out as { output: string }).output.split(" | ")).toEqual([
      'done: Error: tool "refund" is denied by the approval policy of worker "w" (deny_when amount > 1000; amount is a string, not a number)',
      'Error: tool "refund" is denied by the approval policy of worker "w" (deny_when amount > 1000; amount is absent)',
      'Error: tool "refund" is denied by the approval policy of worker "w" (deny_when amount > 1000; amount is an object, not a number)',
    ]);
    expect([...asks.ran, ...denies.ran]).toEqual([]);
  });
});

describe("rules are checked when the catalog loads (the build): file, field and reason", () => {
  const kinds = toolsetRegistry(files, http);
  const problems = (approval: string, extra: Record<string, string> = {}) => {
    try {
      loadCatalog(
        {
          "workers/pay.worker": workerFile(
            `name: pay\ntoolsets:\n  web: { use: http, allow: [api.example.com] }\n  workers: [refunder]\napproval:\n${approval}`,
          ),
          ...extra,
        },
        kinds,
        parseYaml,
      );
    } catch (e) {
      expect(e).toBeInstanceOf(CatalogError);
      return (e as CatalogError).problems.map((p) => p.message);
    }
    return [];
  };
  const refunder = {
    "workers/refunder.worker": workerFile(
      "name: refunder\ninput: { type: object, properties: { charge: { type: string }, amount: { type: number }, meta: { type: object } }, required: [charge] }",
    ),
  };

  it("accepts rules that fit the tools' inputs", () => {
    expect(
      problems(
        `  web_fetch: { ask_when: [{ method: [POST, PUT] }, { headers.X-Danger: "yes" }], deny_when: { url: "https://api.example.com/admin" }, otherwise: allow }
  refunder: { ask_when: { amount: { gt: 100 } }, otherwise: allow, ask: [finance@example.com] }`,
        refunder,
      ),
    ).toEqual([]);
  });

  it("an unknown field, a value the field never takes, a wrong type, a path below a string, an object compared", () => {
    expect(
      problems(
        `  web_fetch: { ask_when: [{ methd: [POST] }, { method: [PSOT] }, { method: 5 }, { url: { gt: 1 } }, { url.host: x }, { headers: x }], otherwise: allow }
  refunder: { ask_when: [{ amont: { gt: 100 } }, { amount: "100" }, { meta.x: 1 }], otherwise: allow }`,
        refunder,
      ),
    ).toEqual([
      'workers/pay.worker: approval.web_fetch.ask_when.0.methd: no field "methd" in the tool\'s input; its fields: url, method, headers, body, save_to',
      'workers/pay.worker: approval.web_fetch.ask_when.1.method: "PSOT" is not a value method takes: "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"',
      "workers/pay.worker: approval.web_fetch.ask_when.2.method: 5 is a number; method is a string in the tool's input",
      "workers/pay.worker: approval.web_fetch.ask_when.3.url: url is a string in the tool's input; gt, gte, lt and lte compare numbers",
      "workers/pay.worker: approval.web_fetch.ask_when.4.url.host: url is a string in the tool's input: a path cannot go below it",
      "workers/pay.worker: approval.web_fetch.ask_when.5.headers: headers is an object in the tool's input; a rule compares strings, numbers, booleans or null",
      'workers/pay.worker: approval.refunder.ask_when.0.amont: no field "amont" in the tool\'s input; its fields: charge, amount, meta',
      'workers/pay.worker: approval.refunder.ask_when.1.amount: "100" is a string; amount is a number in the tool\'s input',
    ]);
  });

  it("oversized, too deep, malformed: refused by the reader, naming the field", () => {
    expect(
      problems(
        `  web_fetch: { ask_when: { url: "${"x".repeat(257)}" }, otherwise: allow }
  refunder: { ask_when: { a.b.c.d.e.f.g.h.i: 1 }, deny_when: { amount: { gt: 1 } }, otherwise: allow, ask: [finance@example.com] }`,
        refunder,
      ),
    ).toEqual([
      "workers/pay.worker: approval.web_fetch.ask_when.url: a value of 257 characters, over 256",
      "workers/pay.worker: approval.refunder.ask_when.a.b.c.d.e.f.g.h.i: too deep: 9 levels, at most 8",
    ]);
    expect(problems("  web_fetch: { deny_when: { method: DELETE }, otherwise: allow, ask: [finance@example.com] }", refunder)).toEqual([
      "workers/pay.worker: approval.web_fetch.ask: names who decides, but this policy never asks (no ask_when, otherwise is not ask)",
    ]);
    expect(problems("  web_fetch: { ask_when: { method: POST } }", refunder)).toEqual([
      "workers/pay.worker: approval.web_fetch.otherwise: required beside ask_when and deny_when: allow, ask or deny, for calls no rule matches",
    ]);
  });
});

describe("the http kind's rules read the method a server acts on", () => {
  it("a GET with a method-override header to DELETE asks under ask_when {method: [DELETE]}; a plain GET runs (counted at the server)", async () => {
    const id = crypto.randomUUID();
    const base = env.FAKE_UPSTREAM_A;
    const host = new URL(base).host;
    const model = scriptedModel([
      {
        toolCalls: [
          { name: "web_fetch", args: { url: `${base}/${id}/echo`, method: "GET" } },
          { name: "web_fetch", args: { url: `${base}/${id}/echo`, method: "GET", headers: { "X-HTTP-Method-Override": "DELETE" } } },
        ],
      },
      { text: "done" },
    ]);
    const h = harness(
      {
        "w.worker": workerFile(
          `name: w\nmodel: test:m\ntoolsets:\n  web: { use: http, allow: ["${host}"] }\napproval:\n  web_fetch: { ask_when: { method: [POST, PUT, PATCH, DELETE] }, otherwise: allow }`,
        ),
      },
      { models: { "test:m": model } },
    );
    const out = (await h.run({ worker: "w", input: { input: "x" } })) as Paused;
    expect(out.status).toBe("awaiting_approval");
    expect(out.pending.map((p) => p.key)).toEqual(["w/turn:1/tool:2/approval"]);
    const log = (await (await fetch(`${base}/log/${id}`)).json()) as { requests: Array<{ method: string }> };
    expect(log.requests.map((r) => r.method)).toEqual(["GET"]);
  });
});

describe("needsApproval: a tool's code decides from the arguments", () => {
  const turn = (...ns: unknown[]): ScriptedReply[] => [{ toolCalls: ns.map((n) => ({ name: "check", args: { n } })) }];

  it("true asks, false runs; it gets the parsed arguments and where the call is, and is not called for arguments the input refuses", async () => {
    const t = setup("", turn(150, 50, "x"), ({ n }) => n > 100);
    const out = (await run(t.h, new MemoryJournalStore())) as Paused;
    expect(out.pending.map((p) => [p.args, p.description])).toEqual([[{ n: 150 }, "w wants to call check (needsApproval)"]]);
    expect(t.ran).toEqual(["check 50"]);
    expect(t.seen).toEqual([
      { args: { n: 150 }, check: { runId: "r1", callPath: "w/turn:1/tool:1", depth: 1, workerChain: ["w"], tool: "check" } },
      { args: { n: 50 }, check: expect.objectContaining({ callPath: "w/turn:1/tool:2" }) },
    ]);
  });

  it("a throw, a rejection or an answer that is not a boolean asks, without showing the error's text", async () => {
    for (const [needs, why] of [
      [
        () => {
          throw new Error("secret-ish detail");
        },
        "needsApproval failed",
      ],
      [() => Promise.reject(new Error("secret-ish detail")), "needsApproval failed"],
      [() => "yes", "needsApproval returned string, not true or false"],
      [() => undefined, "needsApproval returned undefined, not true or false"],
    ] as const) {
      const t = setup("", turn(1), needs);
      const out = (await run(t.h, new MemoryJournalStore())) as Paused;
      expect(out.pending.map((p) => p.description)).toEqual([`w wants to call check (needsApproval; ${why})`]);
      expect(t.ran).toEqual([]);
    }
  });

  it("the worker's approval entry wins: needsApproval is not asked", async () => {
    const t = setup("approval:\n  check: allow", turn(150), () => true);
    expect(await run(t.h, new MemoryJournalStore())).toMatchObject({ status: "succeeded" });
    expect(t.seen).toEqual([]);
    expect(t.ran).toEqual(["check 150"]);
  });

  it("replay: once a call asked, it asks on every replay whatever the code says now, and a rejection stands", async () => {
    let answer = true;
    const t = setup("", turn(7), () => answer);
    const store = new MemoryJournalStore();
    expect((await run(t.h, store)).status).toBe("awaiting_approval");
    answer = false; // the code would now allow it: the recorded ask wins
    expect((await run(t.h, store)).status).toBe("awaiting_approval");
    expect(t.seen).toHaveLength(1);
    await decide(store, approvalKey("w/turn:1/tool:1"), { approved: false, by: "ops" });
    expect(await run(t.h, store)).toMatchObject({ status: "succeeded", output: "done: Error: the call to check was rejected by ops" });
    expect(t.ran).toEqual([]);
  });

  it("needsApproval and ruleArgs get a copy: what they change is neither what the approver is asked about nor what the tool runs with (review 5)", async () => {
    const ran: unknown[] = [];
    const kind = defineToolset({
      kind: "notes",
      config: z.strictObject({}),
      create: () => ({}),
      tools: {
        post: tool({
          description: "Posts a note",
          input: z.strictObject({ note: z.unknown() }),
          needsApproval(args) {
            (args.note as { to: string }).to = "changed by needsApproval";
            return true;
          },
          run: (args) => (ran.push(args), "posted"),
        }),
        put: tool({
          description: "Puts a note",
          input: z.strictObject({ note: z.unknown() }),
          ruleArgs(args) {
            (args.note as { to: string }).to = "changed by ruleArgs";
            return args;
          },
          run: (args) => (ran.push(args), "put"),
        }),
      },
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: "post", args: { note: { to: "ops" } } },
          { name: "put", args: { note: { to: "dev" } } },
        ],
      },
      { text: "done" },
    ]);
    const h = harness(
      {
        "w.worker": workerFile(
          "name: w\nmodel: test:m\ntoolsets:\n  notes: { use: notes }\napproval:\n  put: { ask_when: { note.to: ops }, otherwise: allow }",
        ),
      },
      { kinds: [kind], models: { "test:m": model } },
    );
    const store = new MemoryJournalStore();
    const out = (await h.run({ worker: "w", input: { input: "x" } }, store)) as Paused;
    expect(out.pending.map((p) => p.args)).toEqual([{ note: { to: "ops" } }]);
    expect(ran).toEqual([{ note: { to: "dev" } }]);
    await decide(store, approvalKey("w/turn:1/tool:1"), { approved: true, by: "ops" });
    expect(await h.run({ worker: "w", input: { input: "x" } }, store)).toMatchObject({ status: "succeeded" });
    expect(ran).toEqual([{ note: { to: "dev" } }, { note: { to: "ops" } }]);
  });

  it("a kind that gives both approval and needsApproval is refused where it is defined", () => {
    expect(() =>
      defineToolset({
        kind: "both",
        config: z.strictObject({}),
        create: () => ({}),
        tools: { t: tool({ description: "t", input: z.strictObject({}), approval: "allow", needsApproval: () => true, run: () => 1 }) },
      }),
    ).toThrow('tool "t" of kind "both": give approval or needsApproval, not both');
  });
});

describe("a code function decides whether a worker's call of it asks", () => {
  it("needsApproval on defineFunction: its input as parsed; true asks the caller's approver, false runs; the caller's entry wins", async () => {
    const refunded: number[] = [];
    const refund = defineFunction({
      name: "refund",
      description: "Refunds a charge",
      input: z.strictObject({ charge: z.string(), amount: z.number().default(0) }),
      needsApproval: ({ amount }) => amount > 100,
      run: ({ amount }) => (refunded.push(amount), `refunded ${amount}`),
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: "refund", args: { charge: "a", amount: 150 } },
          { name: "refund", args: { charge: "b", amount: 50 } },
          { name: "refund", args: { charge: "c" } },
        ],
      },
      { text: "done" },
    ]);
    const file = (approval = "") => ({ "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  workers: [refund]${approval}`) });
    const out = (await harness(file(), { functions: [refund], models: { "test:m": model } }).run({ worker: "w", input: { input: "x" } })) as Paused;
    expect(out.pending.map((p) => [p.args, p.description])).toEqual([[{ charge: "a", amount: 150 }, "w wants to call refund (needsApproval)"]]);
    expect(refunded).toEqual([50, 0]);
    const allowed = scriptedModel([{ toolCalls: [{ name: "refund", args: { charge: "a", amount: 150 } }] }, { text: "done" }]);
    const h = harness(file("\napproval:\n  refund: allow"), { functions: [refund], models: { "test:m": allowed } });
    expect(await h.run({ worker: "w", input: { input: "x" } })).toMatchObject({ status: "succeeded" });
    expect(refunded).toEqual([50, 0, 150]);
  });
});

describe("replay of a run whose calls asked under rules", () => {
  it("from every journal prefix: no tool runs twice, no step changes, the same outcome", async () => {
    const turns: ScriptedReply[] = [
      {
        toolCalls: [
          { name: "request", args: { method: "POST", path: "/p" } },
          { name: "refund", args: { charge: "c", amount: 500 } },
          { name: "check", args: { n: 1 } },
        ],
      },
      { toolCalls: [{ name: "request", args: { path: "/g" } }] },
    ];
    // approve_all decides what names no people (a policy naming people would wait for them).
    const make = () => setup(RULES.replace(", ask: [finance@example.com]", ""), turns, () => true);
    const original = make();
    const full = new MemoryJournalStore();
    const req = { worker: "w", input: { input: "x" }, runId: "rp", approvalMode: "approve_all" as const };
    const first = await original.h.run(req, full);
    expect(first).toMatchObject({ status: "succeeded" });
    const entries = [...full.entries];
    expect(entries.filter(([k]) => k.endsWith("/approval-rule")).map(([, v]) => (v as { rule: string }).rule)).toEqual([
      'ask_when method in ["POST","PUT","PATCH","DELETE"]',
      "ask_when amount > 100",
      "needsApproval",
    ]);
    for (let k = 0; k <= entries.length; k++) {
      const store = new MemoryJournalStore();
      for (const [key, value] of entries.slice(0, k)) store.put(key, value);
      const replay = make();
      const executed: string[] = [];
      expect(await executeRun({ ...replay.h.config, beforeStep: (key) => void executed.push(key) }, store, req), `prefix ${k}`).toEqual(first);
      const recorded = new Set(entries.slice(0, k).map(([key]) => key));
      expect(
        executed.filter((key) => recorded.has(key)),
        `prefix ${k}`,
      ).toEqual([]);
      expect([...store.entries.keys()].sort()).toEqual([...full.entries.keys()].sort());
    }
  });
});

describe("remembered approvals are scoped by the rule the call asked under", () => {
  const call = (n: number) => `w/turn:${n}/tool:1`;
  const args = { charge: "c", amount: 500 };
  const def = { name: "refund", description: "refunds", parameters: { type: "object" }, readOnly: false, approval: () => "ask" as const };
  const inner = { id: "i", listTools: async () => [def], callTool: async () => "refunded" };

  /** A journal where call 1 asked under `rule` (none: the plain policy) and was approved "for the rest of the run". */
  async function remembered(rule: string | undefined) {
    const store = new MemoryJournalStore();
    if (rule !== undefined) store.put(approvalRuleKey(call(1)), { rule, name: "refund" });
    store.put(approvalKey(call(1)), { approved: true, by: "ops", remember: { worker: "w", tool: "refund", args } });
    store.put(resultKey(call(1)), { ok: true, value: "refunded" });
    return Journal.open(store);
  }
  const gateWith = async (journal: Journal, policy: unknown) =>
    approvalGated(inner, {
      journal,
      mode: "ask",
      policies: { refund: policy as never },
      workerChain: ["w"],
      host: {},
      remembered: rememberedApprovals(journal),
    });
  const asked = (p: Promise<unknown>) =>
    p.then(
      () => "ran",
      (e: { pending?: PendingApproval[] }) => (e.pending ? "asked" : String(e)),
    );

  it("hostile arguments at the gate (nested past the stack, megabytes of text) never throw: the call asks, saying why", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = { a: deep };
    const rules = { ask_when: [{ amount: { gt: 100 } }], otherwise: "allow" };
    for (const [amount, why] of [
      [deep, "amount is an object, not a number"],
      ["9".repeat(5_000_000), "amount is a string, not a number"],
    ] as const) {
      const gate = await gateWith(await remembered("ask_when amount > 100"), rules);
      const err = await gate.callTool("refund", { charge: "c", amount }, { ...bareContext(), callPath: call(2) }).then(
        () => undefined,
        (e: { pending?: PendingApproval[] }) => e,
      );
      expect(err?.pending?.map((p) => p.description)).toEqual([`w wants to call refund (ask_when amount > 100; ${why})`]);
    }
  });

  it("covers the same call under the same rule, and the decision says which rule it remembered", async () => {
    const journal = await remembered("ask_when amount > 100");
    const gate = await gateWith(journal, { ask_when: [{ amount: { gt: 100 } }], otherwise: "allow" });
    expect(await gate.callTool("refund", args, { ...bareContext(), callPath: call(2) })).toBe("refunded");
    expect(journal.get(approvalKey(call(2)))).toMatchObject({ approved: true, by: "an earlier approval of this same call under ask_when amount > 100" });
  });

  it("does not cover a call another rule asks about, nor one the plain policy asks about, nor the other way round", async () => {
    const other = await gateWith(await remembered("ask_when amount > 100"), { ask_when: [{ amount: { gt: 200 } }], otherwise: "allow" });
    expect(await asked(other.callTool("refund", args, { ...bareContext(), callPath: call(2) }))).toBe("asked");
    const plain = await gateWith(await remembered("ask_when amount > 100"), "ask");
    expect(await asked(plain.callTool("refund", args, { ...bareContext(), callPath: call(2) }))).toBe("asked");
    const underRule = await gateWith(await remembered(undefined), { ask_when: [{ amount: { gt: 100 } }], otherwise: "allow" });
    expect(await asked(underRule.callTool("refund", args, { ...bareContext(), callPath: call(2) }))).toBe("asked");
    // The plain policy's remember still covers the plain policy's asks (journals from before rules).
    const same = await gateWith(await remembered(undefined), "ask");
    expect(await asked(same.callTool("refund", args, { ...bareContext(), callPath: call(2) }))).toBe("ran");
  });
});
