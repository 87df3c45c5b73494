import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseYaml } from "../../src/build/yaml";
import { parseJson } from "../../src/engine";
import { parseSuite, runSuite } from "../../src/evals";
import { functions } from "../fixtures/functions/index";
import { files as workerFiles } from "../../src/edgework.generated";
import { appKinds } from "../../src/engine/toolsets/app-kinds";
import { toolsets } from "../../src/toolsets";
import { settle } from "../durable-objects/helpers";

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

  it("needs the API token; an unknown run is 404", async () => {
    const id = await recordedRun();
    expect((await call(`/runs/${id}/eval-case`)).status).toBe(401);
    expect((await call(`/runs/${crypto.randomUUID()}/eval-case`, { headers: auth })).status).toBe(404);
  });
});
