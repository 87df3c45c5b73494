import { parse as parseYaml } from "yaml";
import * as z from "zod";
import type { Catalog } from "../engine";
import { WorkerFileError } from "../engine/errors";
import { issuesToErrors, TOOL_NAME } from "../engine/worker-file";
import { POINTER } from "./json-pointer";

const secretEnv = z.string().regex(/^[A-Z][A-Z0-9_]*$/, "must name an environment variable (A-Z, 0-9, _)");

/** How a delivery proves it is genuine. */
export const verification = z.discriminatedUnion("scheme", [
  // X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>; delivery id X-GitHub-Delivery.
  z.strictObject({ scheme: z.literal("github"), secret_env: secretEnv }),
  // Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">; delivery id: the event id.
  z.strictObject({ scheme: z.literal("stripe"), secret_env: secretEnv, tolerance_seconds: z.number().int().positive().default(300) }),
  // Any HMAC-SHA256 of the raw body in a header, hex or base64, with an optional prefix ("sha256=").
  z.strictObject({
    scheme: z.literal("hmac"),
    secret_env: secretEnv,
    header: z.string().min(1),
    encoding: z.enum(["hex", "base64"]).default("hex"),
    prefix: z.string().default(""),
  }),
  // A shared secret sent as is in a header.
  z.strictObject({ scheme: z.literal("token"), secret_env: secretEnv, header: z.string().min(1).default("X-Webhook-Token") }),
]);

const pointer = z.string().regex(POINTER, "must be a JSON pointer such as /issue/title");
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const triggerSchema = z.strictObject({
  worker: z.string().regex(TOOL_NAME),
  verify: verification,
  /** Worker input field → JSON pointer into the payload. */
  input: z.record(z.string().min(1), pointer),
  /** JSON pointer (or top-level field name) → the value, or values, it must have; else the delivery is ignored. */
  filter: z.record(z.string(), z.union([scalar, z.array(scalar).min(1)])).default({}),
  approval_mode: z.enum(["ask", "approve_all", "reject_all"]).default("ask"),
});

export type Trigger = z.output<typeof triggerSchema> & { name: string };
export type Triggers = ReadonlyMap<string, Trigger>;

/**
 * Parses `triggers.yaml` (trigger name → trigger) against the catalog: every
 * problem is a `WorkerFileError` naming the file and field. An unknown worker that
 * `mayMeanRefused` (a worker file refused for its name) is not reported again.
 */
export function parseTriggers(file: string, text: string, catalog: Catalog, mayMeanRefused = (_matches: (name: string) => boolean) => false): { triggers: Map<string, Trigger>; problems: WorkerFileError[] } {
  const triggers = new Map<string, Trigger>();
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    return { triggers, problems: [new WorkerFileError(file, "(file)", `malformed YAML: ${(err as Error).message.split("\n")[0]}`)] };
  }
  if (typeof raw !== "object" || Array.isArray(raw)) return { triggers, problems: [new WorkerFileError(file, "(file)", "must map trigger names to triggers")] };
  const problems: WorkerFileError[] = [];
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!TOOL_NAME.test(name)) {
      problems.push(new WorkerFileError(file, name, "trigger names are 1-64 characters of a-z A-Z 0-9 _ - (they are part of /hooks/<name>)"));
      continue;
    }
    const parsed = triggerSchema.safeParse(value);
    if (!parsed.success) {
      problems.push(...issuesToErrors(file, parsed.error, name));
      continue;
    }
    const worker = catalog.get(parsed.data.worker);
    if (!worker) {
      if (!mayMeanRefused((n) => n === parsed.data.worker)) problems.push(new WorkerFileError(file, `${name}.worker`, `unknown worker "${parsed.data.worker}"; known: ${[...catalog.workers.keys()].sort().join(", ")}`));
      continue;
    }
    const props = worker.input.properties as Record<string, unknown> | undefined;
    for (const field of Object.keys(parsed.data.input)) {
      if (props && !(field in props)) problems.push(new WorkerFileError(file, `${name}.input.${field}`, `worker "${worker.name}" has no input field "${field}"; its fields: ${Object.keys(props).join(", ")}`));
    }
    triggers.set(name, { ...parsed.data, name });
  }
  return { triggers, problems };
}
