import * as z from "zod";
import { REQUESTS, RESPONSES, ROUTES, type Answer, type Route } from "./routes";

/**
 * The OpenAPI 3.1 document of the whole HTTP API, made from the route table (./routes.ts) and
 * its zod schemas: request bodies as the routes read them (their input side), answers as they
 * send them. Static: it holds no configuration, secret or catalog: only the package version and
 * where the app is.
 */

type Json = Record<string, unknown>;

const REF = "#/components/schemas/";
const MEDIA: Record<string, string> = { html: "text/html", sse: "text/event-stream", text: "text/plain", yaml: "text/yaml", json: "application/json" };
const text = { type: "string" };

/** The named schemas of one side, each referring to the others by `$ref`. */
function components(named: Record<string, z.ZodType>, io: "input" | "output"): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => REF + id }) as { schemas: Record<string, Json> };
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return schemas;
}

const NAMES = new Map<unknown, string>([...Object.entries(RESPONSES), ...Object.entries(REQUESTS)].map(([n, s]) => [s, n]));
/** A named schema (one not in RESPONSES or REQUESTS points at nothing: tests/http/openapi.test.ts resolves every `$ref`). */
const ref = (schema: z.ZodType): Json => ({ $ref: REF + NAMES.get(schema) });

/** `Answer` as a response object's `content`. */
function content(answer: Answer): Json {
  const out: Json = {};
  const schemas: Json[] = [];
  for (const a of [answer].flat()) {
    if (typeof a !== "string") schemas.push(ref(a));
    else if (a !== "redirect") out[MEDIA[a]!] = { schema: a === "json" ? {} : text };
  }
  if (schemas.length) out[MEDIA.json!] = { schema: schemas[1] ? { oneOf: schemas } : schemas[0] };
  return out;
}

const SECURITY: Record<Route["auth"], Json[]> = {
  token: [{ apiToken: [] }],
  person: [{ apiToken: [] }, { session: [] }],
  link: [],
  signature: [],
  public: [],
};

function operation(route: Route, method: string): Json {
  const page = Object.values(route.ok).some((a) => a === "html" || a === "redirect");
  const refused = { description: "Refused", content: page ? content("html") : { [MEDIA.json!]: { schema: { $ref: `${REF}Problem` } } } };
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(route.ok))
    responses[status] = {
      description: route.summary,
      content: content(answer as Answer),
      ...(status === "303" ? { headers: { Location: { schema: text } } } : {}),
    };
  for (const status of [...route.errors, ...(route.auth === "token" ? [401, 503] : [])]) responses[status] = refused;

  const parameters: Json[] = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: text }));
  if (route.query) {
    const q = z.toJSONSchema(route.query, { io: "input" }) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: "query", required: !!q.required?.includes(name), schema });
  }
  for (const name of route.headers ?? []) parameters.push({ name, in: "header", schema: text });

  const body = route.body;
  const requestBody =
    body === undefined
      ? undefined
      : {
          required: method === "post",
          content:
            body === "form"
              ? { "application/x-www-form-urlencoded": { schema: { type: "object" } } }
              : { [MEDIA.json!]: { schema: body === "json" ? {} : ref(body) } },
        };
  return {
    operationId: route.method === "all" ? `${route.id}_${method}` : route.id,
    summary: route.summary,
    security: SECURITY[route.auth],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody && method !== "get" ? { requestBody } : {}),
    responses,
  };
}

/**
 * The document. `base`: where the app is mounted ("" at the root; it names the session cookie);
 * `server`: the app's URL (its origin and base), absent for the copy in the package.
 */
export function openApiDocument(version: string, base = "", server?: string): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of ROUTES) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    for (const method of route.method === "all" ? ["get", "post", "delete"] : [route.method]) (paths[path] ??= {})[method] = operation(route, method);
  }
  return {
    openapi: "3.1.0",
    info: { title: "edgework", version },
    ...(server ? { servers: [{ url: server }] } : {}),
    paths,
    components: {
      // Json: any JSON value (zod's recursive union is more than generators such as openapi-typescript can type).
      schemas: { ...components(REQUESTS, "input"), ...components(RESPONSES, "output"), Json: {} },
      securitySchemes: {
        apiToken: { type: "http", scheme: "bearer" },
        session: { type: "apiKey", in: "cookie", name: `${base ? "__Secure-" : "__Host-"}edgework_session` },
      },
    },
  };
}
