import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseYaml } from "../../src/build/yaml";
import { parseJson } from "../../src/engine";
import { parseSuite, runSuite } from "../../src/evals";
import { functions } from "../fixtures/functions/index";
import { files as workerFiles } from "../../src/edgework.generated";
import { appKinds } from "../../src/engine/toolsets/app-kinds";
import { toolsets } from "../../src/toolsets";
import { effectCount, effectUrl, script, settle } from "../durable-objects/helpers";
import { evalSuiteOf, evalSuiteYaml, NOT_RECORDED } from "../../src/evals/from-run";
import type { RunView } from "../../src/runs/types";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));

/** An input a naive YAML writer would turn into other data: a document marker, a comment, a boolean word. */
const HOSTILE = "yes\n---\n# not a comment: [x]\n  key: {y}";

async function recordedRun(): Promise<string> {
  const res = await call("/runs", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ worker: "scoped", input: { input: HOSTILE } }),
  });
  const { id } = (await res.json()) as { id: string };
  expect((await settle(id)).status).toBe("succeeded");
  return id;
}

describe("GET /runs/:id/eval-case", () => {
  it("turns a recorded run into a suite of one case: its input, every tool call it made (nested ones too), stubs of what tools answered", async () => {
    const id = await recordedRun();
    const res = await call(`/runs/${id}/eval-case`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/yaml; charset=utf-8");
    const text = await res.text();
    expect(text).toMatch(new RegExp(`^# From run ${id} \\(succeeded\\)`));
    const doc = parse(text);
    // The YAML is the JSON form, the hostile input intact.
    const json = await (await call(`/runs/${id}/eval-case?format=json`, { headers: auth })).json();
    expect(doc).toEqual(json);
    const [c] = doc.cases;
    expect(doc.worker).toBe("scoped");
    expect(c.input).toEqual({ input: HOSTILE });
    const called = c.checks.flatMap((k: any) => (k.tool_called ? [`${k.tool_called.worker} → ${k.tool_called.name}`] : []));
    expect(called.sort()).toEqual(
      [
        "scoped → scoped-child",
        "scoped → shared_increment",
        "scoped → tally_increment",
        "scoped-child → shared_increment",
        "scoped-child → tally_increment",
      ].sort(),
    );
    expect(c.checks[0]).toEqual({ status: "succeeded" });
    // The counters' answers are stubbed; the nested worker runs again (no stub).
    expect(Object.keys(c.tools).sort()).toEqual(["shared_increment", "tally_increment"]);
    expect(c.tools.tally_increment).toHaveLength(2);
    for (const stub of c.tools.tally_increment) expect(typeof stub.result).toBe("number");
    // A valid suite file, as `edgework eval` reads it.
    expect(parseSuite("evals/recorded.yaml", text, parseYaml).cases[0]!.name).toBe(`run ${id}`);
  });

  it("the case replays offline through the eval runner and passes: the same calls, answered by the stubs", async () => {
    const id = await recordedRun();
    const text = await (await call(`/runs/${id}/eval-case`, { headers: auth })).text();
    const suite = parseSuite("evals/recorded.yaml", text, parseYaml);
    const { cases } = await runSuite(suite, { files: workerFiles, kinds: appKinds(toolsets), functions, parse: parseJson, vars: {} });
    expect(cases[0]!.checks.filter((c) => !c.pass)).toEqual([]);
    expect(cases[0]!.checks.length).toBe(6);
  });

  it("a run paused on a gated call exports no way to make it: an error stub answers the call, reject_all, the header names it; the replay never runs it", async () => {
    const tag = `eval-paused-${crypto.randomUUID()}`;
    const post = { url: effectUrl(tag), method: "POST", body: "deploy to production" };
    await script("pause-writer", [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: post }] }]);
    const res = await call("/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ worker: "pause-writer", input: "post it" }),
    });
    const { id } = (await res.json()) as { id: string };
    expect((await settle(id)).status).toBe("awaiting_approval");
    const text = await (await call(`/runs/${id}/eval-case`, { headers: auth })).text();
    expect(text).toContain('# Not recorded in the source run (pending, or a result cut): "fx_fetch".');
    const [c] = parse(text).cases;
    expect(c.approval_mode).toBe("reject_all");
    expect(c.tools.fx_fetch).toEqual([{ args: post, error: NOT_RECORDED }]);
    // `edgework eval` in CI: the environment's values, the model asked for the same call (approved, even).
    const suite = parseSuite("evals/paused.yaml", text, parseYaml);
    const replay = (approval_mode: "approve_all" | "reject_all") => ({
      ...suite,
      cases: [{ ...suite.cases[0]!, approval_mode, script: { "pause-writer": [{ tool_calls: [{ name: "fx_fetch", arguments: post }] }, { text: "done" }] } }],
    });
    const vars = { FAKE_OPENAI_HOST: env.FAKE_OPENAI_HOST };
    for (const mode of ["reject_all", "approve_all"] as const) {
      const { cases } = await runSuite(replay(mode), { files: workerFiles, kinds: appKinds(toolsets), functions, parse: parseJson, vars });
      expect(cases[0]!.checks.find((k) => k.check.startsWith("tool_called"))?.pass).toBe(true);
    }
    expect(await effectCount(tag)).toBe(0);
  });

  it("carries each decision's audit into the case: the call, edited, who and the way, when, the arguments' hash, the edit", async () => {
    const tag = `eval-decided-${crypto.randomUUID()}`;
    const asked = { url: effectUrl(tag), method: "POST", body: "as asked" };
    await script("edit-writer", [{ tool_calls: [{ id: "post", name: "fx_fetch", arguments: asked }] }, { text: "posted" }]);
    const res = await call("/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ worker: "edit-writer", input: "post it" }),
    });
    const { id } = (await res.json()) as { id: string };
    const paused = await settle(id);
    const edited = { ...asked, body: "as edited" };
    const decide = await call(`/runs/${id}/approvals/${paused.approvals[0]!.id}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve", arguments: edited, note: "typo" }),
    });
    expect(decide.status).toBe(200);
    const view = await settle(id);
    expect(view.status).toBe("succeeded");
    const text = await (await call(`/runs/${id}/eval-case`, { headers: auth })).text();
    const [c] = parse(text).cases;
    expect(c.decisions).toEqual([
      {
        tool: "fx_fetch",
        call: view.approvals[0]!.call_path,
        outcome: "edited",
        by: "api",
        email: null,
        via: "api",
        at: new Date(view.approvals[0]!.decided_at!).toISOString(),
        args_sha256: view.approvals[0]!.args_sha256,
        note: "typo",
        edited_args: edited,
      },
    ]);
    // Still a suite `edgework eval` reads.
    expect(parseSuite("evals/decided.yaml", text, parseYaml).cases[0]!.decisions).toHaveLength(1);
  });

  it("a tool name the model made up cannot write YAML through the header: one comment line, JSON-quoted, ASCII", () => {
    const name = "x\ncases: []\r\u2028# y";
    const tool = { id: "1", name, path: "p", args: {}, status: "pending" as const, calls: [] };
    const view = {
      id: "r1",
      worker: "w",
      status: "awaiting_approval",
      input: "in",
      call_tree: { worker: "w", path: "w", turns: 1, usage: {}, tools: [tool] },
    } as unknown as RunView;
    const text = evalSuiteYaml(view);
    // The name's line break stays escaped everywhere: no line of the file starts inside it.
    expect(text.split("\n").filter((l) => l.includes("cases: []") && !l.includes("\\ncases: []"))).toEqual([]);
    expect(text.split("\n").filter((l) => l.startsWith("#") && l.includes("cases: []"))).toEqual([
      '# Not recorded in the source run (pending, or a result cut): "x\\ncases: []\\r\\u2028# y".',
    ]);
    const doc = parse(text);
    expect(doc.cases[0].tools[name]).toEqual([{ args: {}, error: NOT_RECORDED }]);
    expect(doc.cases[0].approval_mode).toBe("reject_all");
  });

  it("hostile: tool names the model made up that name Object's own members (__proto__, constructor, toString) still export", () => {
    const names = ["__proto__", "constructor", "toString", "hasOwnProperty"];
    const tools = names.map((name, i) => ({ id: String(i), name, path: `w/turn:1/tool:${i}`, args: {}, status: "pending" as const, calls: [] }));
    const view = {
      id: "r1",
      worker: "w",
      status: "awaiting_approval",
      input: "in",
      call_tree: { worker: "w", path: "w", turns: 1, usage: {}, tools },
    } as unknown as RunView;
    const suite = evalSuiteOf(view) as { cases: Array<{ tools: Record<string, unknown> }> };
    expect(Object.getPrototypeOf(suite.cases[0]!.tools)).toBe(Object.prototype);
    expect(Object.keys(suite.cases[0]!.tools)).toEqual(names);
    for (const name of names) expect(Object.getOwnPropertyDescriptor(suite.cases[0]!.tools, name)?.value).toEqual([{ args: {}, error: NOT_RECORDED }]);
    expect(evalSuiteYaml(view)).toContain('"__proto__":');
  });

  it("needs the API token; an unknown run is 404", async () => {
    const id = await recordedRun();
    expect((await call(`/runs/${id}/eval-case`)).status).toBe(401);
    expect((await call(`/runs/${crypto.randomUUID()}/eval-case`, { headers: auth })).status).toBe(404);
  });
});
