import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { settle, stub } from "./helpers";

const auth = { Authorization: "Bearer test-token" };
const get = async (path: string) => {
  const res = await exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: auth }));
  return { status: res.status, body: (await res.json()) as any };
};
const listed = async (query: string) => (await get(`/runs?${query}`)).body.runs.map((r: { id: string }) => r.id) as string[];
const sql = <T>(id: string, query: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.sql.exec(query).toArray() as T[]);
/** A new instance of the object (as after an eviction): the next activation replays. */
const evict = (id: string) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.abort("evicted")).catch((err: { durableObjectReset?: boolean }) =>
    expect(err.durableObjectReset).toBe(true),
  );

const tagger = (id: string, attrs: Array<[unknown, unknown]>, opts: { attributes?: Record<string, string>; sleep?: boolean; inStep?: boolean } = {}) =>
  stub(id).start({
    id,
    worker: "fn-tagger",
    input: { attrs, sleep: opts.sleep ?? false, inStep: opts.inStep ?? false },
    approvalMode: "ask",
    budget: {},
    attributes: opts.attributes,
  });

describe("ctx.setAttribute", () => {
  it("sets attributes over the start's; the view, the index and attr filters show them; a replay writes none of them again", async () => {
    const id = "attr-set";
    await tagger(
      id,
      [
        ["stage", "triaged"],
        ["priority", 2],
      ],
      { attributes: { repo: "acme/api", stage: "new" }, sleep: true },
    );
    const paused = await settle(id);
    expect(paused).toMatchObject({ status: "waiting", attributes: { repo: "acme/api", stage: "triaged", priority: "2" } });
    await vi.waitFor(async () => expect(await listed("worker=fn-tagger&attr.stage=triaged&attr.repo=acme%2Fapi")).toEqual([id]));
    expect(await listed("worker=fn-tagger&attr.stage=new")).toEqual([]);

    // What the table holds is changed behind the run's back: a replay that wrote its attributes again would put it back.
    await sql(id, "UPDATE attributes SET value = 'moved-on' WHERE name = 'stage'");
    await evict(id);
    await stub(id).advanceClock(2 * 60_000);
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", output: { refused: [] }, attributes: { repo: "acme/api", stage: "moved-on", priority: "2" } });
    expect(await sql<{ key: string }>(id, "SELECT key FROM journal WHERE key LIKE '%/attr:%' ORDER BY seq")).toEqual([
      { key: "fn-tagger/attr:1" },
      { key: "fn-tagger/attr:2" },
    ]);
  });

  it("refuses hostile names and values before taking a step, an 11th name with a recorded refusal, and a call inside ctx.step", async () => {
    const id = "attr-refused";
    const eleven = Array.from({ length: 8 }, (_, i) => [`n${i}`, "v"] as [string, string]);
    await tagger(
      id,
      [
        ["Repo", "x"],
        ["repo; DROP TABLE runs", "x"],
        ["ré", "x"],
        ["a".repeat(33), "x"],
        ["ok", "line\nbreak"],
        ["ok", "\u202Egnp.exe"],
        ["ok", "x".repeat(257)],
        ["ok", ""],
        ["ok", { nested: true }],
        ["ok", Number.NaN],
        ["ok", "\uD800"],
        ...eleven,
        ["eleventh", "v"],
        ["n0", "again"],
      ],
      { attributes: { repo: "acme/api", team: "core" }, inStep: true },
    );
    const view = await settle(id);
    expect(view.status).toBe("succeeded");
    const refused = (view.output as { refused: string[] }).refused;
    expect(refused.slice(0, 4).every((m) => m.includes("is not an attribute name"))).toBe(true);
    expect(refused.slice(4, 11)).toEqual([
      expect.stringContaining("control characters"),
      expect.stringContaining("bidirectional overrides"),
      expect.stringContaining("1 to 256 characters"),
      expect.stringContaining("1 to 256 characters"),
      expect.stringContaining("a string, a finite number or a boolean"),
      expect.stringContaining("a string, a finite number or a boolean"),
      expect.stringContaining("surrogate"),
    ]);
    expect(refused[11]).toMatch(/the run has 10 attributes \(n0, n1, .*repo, team\), the most a run may have/);
    expect(refused[12]).toMatch(/ctx\.setAttribute was called inside ctx\.step\("tag"\)/);
    expect(refused).toHaveLength(13);
    expect(view.attributes).toMatchObject({ repo: "acme/api", team: "core", n0: "again", n7: "v" });
    expect(Object.keys(view.attributes)).toHaveLength(10);
    // Refused names and values took no step; the 11th name's refusal is one (a replay refuses it again), and "n0" again is one.
    expect((await sql<{ n: number }>(id, "SELECT count(*) AS n FROM journal WHERE key LIKE '%/attr:%'"))[0]!.n).toBe(10);
  });

  it("a replay that sets another value at the same step fails the run as nondeterministic, naming the call", async () => {
    const id = "attr-unsteady";
    await stub(id).start({ id, worker: "fn-unsteady-tag", input: {}, approvalMode: "ask", budget: {} });
    expect((await settle(id)).status).toBe("waiting");
    await evict(id);
    await stub(id).advanceClock(2 * 60_000);
    const failed = await settle(id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "nondeterministic" } });
    expect(failed.error!.message).toMatch(
      /fn-unsteady-tag\/attr:1: recorded for ctx\.setAttribute\("at", …\), now asked for ctx\.setAttribute\("at", …\) with another value/,
    );
  });
});

describe("POST /runs attributes", () => {
  const start = (body: unknown) =>
    exports.default.fetch(
      new Request("https://edgework.test/runs", { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) }),
    );

  it("are stored with the run and found by GET /runs; numbers and booleans as their text, in NFC", async () => {
    const res = await start({ worker: "fn-shout", input: { kind: "x" }, attributes: { repo: "acme/web", issue: 42, urgent: true, name: "Cafe\u0301" } });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    expect((await stub(id).status())!.attributes).toEqual({ issue: "42", name: "Café", repo: "acme/web", urgent: "true" });
    await vi.waitFor(async () => expect(await listed("attr.repo=acme%2Fweb&attr.name=Caf%C3%A9")).toEqual([id]));
    expect((await get(`/runs?attr.repo=acme%2Fweb`)).body.runs[0].attributes).toEqual({ issue: "42", name: "Café", repo: "acme/web", urgent: "true" });
  });

  it("hostile attributes are refused with 400 naming each, and nothing is started", async () => {
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`a${i}`, "v"]));
    for (const [attributes, path] of [
      [many, "attributes"],
      [{ "Bad Name": "x" }, "attributes.Bad Name"],
      [{ "x'); DELETE FROM runs; --": "x" }, "attributes.x'); DELETE FROM runs; --"],
      [{ repo: "a\u0000b" }, "attributes.repo"],
      [{ repo: "y".repeat(300) }, "attributes.repo"],
      [{ repo: null }, "attributes.repo"],
      [{ repo: ["a"] }, "attributes.repo"],
      [["repo"], "attributes"],
    ] as const) {
      const res = await start({ worker: "fn-shout", input: { kind: "x" }, attributes });
      expect(res.status, JSON.stringify(attributes).slice(0, 60)).toBe(400);
      expect(((await res.json()) as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toContain(path);
    }
  });
});

describe("GET /runs attr filters", () => {
  it("hostile filters are refused with 400 naming attr.<name>; SQL-ish and unicode values are only values", async () => {
    for (const [q, path] of [
      ["attr.Repo=x", "attr.Repo"],
      ["attr.=x", "attr."],
      ["attr.repo=", "attr.repo"],
      [`attr.repo=${"z".repeat(257)}`, "attr.repo"],
      ["attr.repo=a%0Ab", "attr.repo"],
      ["attr.a=1&attr.b=2&attr.c=3&attr.d=4", "attr.*"],
    ] as const) {
      const { status, body } = await get(`/runs?${q}`);
      expect(status, q).toBe(400);
      expect(
        body.issues.map((i: { path: string }) => i.path),
        q,
      ).toContain(path);
    }
    // attr.__proto__ would be an object's prototype slot, dropped as a criterion (every run listed): refused by name.
    const proto = await get("/runs?attr.__proto__=x");
    expect(proto.status).toBe(400);
    expect(JSON.stringify(proto.body)).toContain("attr.__proto__");
    // The same in a bulk operation's filter, where a dropped criterion would widen what it acts on.
    const op = await exports.default.fetch(
      new Request("https://edgework.test/operations", {
        method: "POST",
        headers: { Authorization: "Bearer test-token", "content-type": "application/json" },
        body: '{"action":"cancel","dry_run":true,"filter":{"status":"queued","attributes":{"__proto__":"x"}}}',
      }),
    );
    expect(op.status).toBe(400);
    expect(await op.text()).toContain("a key may not be __proto__");
    // Escaped in the JSON text it is the same key once parsed.
    const escaped = await exports.default.fetch(
      new Request("https://edgework.test/operations", {
        method: "POST",
        headers: { Authorization: "Bearer test-token", "content-type": "application/json" },
        body: '{"action":"cancel","dry_run":true,"filter":{"status":"queued","attributes":{"\\u005f_proto__":"x"}}}',
      }),
    );
    expect(escaped.status).toBe(400);
    // A name that only looks like a prototype's member is a name like any other.
    expect((await get("/runs?attr.constructor=x")).status).toBe(200);
    for (const value of ["x' OR '1'='1", "%", "_", "日本語", "\u{1F600}"]) {
      const { status, body } = await get(`/runs?attr.repo=${encodeURIComponent(value)}`);
      expect(status, value).toBe(200);
      expect(body.runs, value).toEqual([]);
    }
  });
});
