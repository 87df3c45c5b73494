import * as z from "zod";
import type { Catalog, CatalogWorker } from "../engine";
import { malformed, type ParseData } from "../engine/data-files";
import { WorkerFileError } from "../engine/errors";
import { describeIssues, validatorFor } from "../engine/json-schema";
import { budgetSchema, issuesToErrors, startInput, TOOL_NAME } from "../engine/catalog/worker-file";
import { cronProblem } from "./cron";
import { ADDRESS, ALLOW_FROM } from "./email-address";
import { SAMPLE_EMAIL_INPUT } from "./email-input";
import { POINTER } from "./json-pointer";
import { EVENT_NAME } from "../engine/waits/bounds";
import { withScheduledTime } from "./scheduled-time";
import { flowProblem, flowSchema, scheduleConcurrencySchema } from "./flow/config";
import { MAX_NOTIFY_URL_CHARS, notifyUrlShapeProblem } from "../notify/notify-url";
import { NOTIFY_ON } from "../runs/types";
import { attributeNameProblem, MAX_ATTRIBUTES } from "../engine/attributes";
import { attributesSchema } from "../api/attributes";

const secretEnv = z.string().regex(/^[A-Z][A-Z0-9_]*$/, "must name an environment variable (A-Z, 0-9, _)");

/** How a delivery proves it is genuine. */
export const verification = z.discriminatedUnion("scheme", [
  // X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>; X-GitHub-Delivery is not signed.
  z.strictObject({ scheme: z.literal("github"), secret_env: secretEnv }),
  // Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">; the event id is in the signed body.
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
/** Attribute name → JSON pointer into the payload: the run's attributes (a value that is absent or no short text is left out). */
const attributePointers = z
  .record(z.string(), pointer)
  .superRefine((a, ctx) => {
    const names = Object.keys(a);
    if (names.length > MAX_ATTRIBUTES) ctx.addIssue({ code: "custom", message: `at most ${MAX_ATTRIBUTES} attributes, got ${names.length}` });
    for (const name of names) {
      const problem = attributeNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
    }
  })
  .default({});
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** A completion webhook for the trigger's runs (src/notify): its URL (`${NAME}`s filled at start), and when it is posted. */
const notifyFields = {
  notify_url: z
    .string()
    .max(MAX_NOTIFY_URL_CHARS)
    .superRefine((v, ctx) => {
      const problem = notifyUrlShapeProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  notify_on: z.array(z.enum(NOTIFY_ON)).min(1).optional(),
};

export const triggerSchema = z.strictObject({
  worker: z.string().regex(TOOL_NAME),
  verify: verification,
  /** Worker input field → JSON pointer into the payload. */
  input: z.record(z.string().min(1), pointer),
  attributes: attributePointers,
  /** JSON pointer (or top-level field name) → the value, or values, it must have; else the delivery is ignored. */
  filter: z.record(z.string(), z.union([scalar, z.array(scalar).min(1)])).default({}),
  approval_mode: z.enum(["ask", "approve_all", "reject_all"]).default("ask"),
  /** The runs' budget (over the worker file's, field by field). */
  budget: budgetSchema.optional(),
  ...flowSchema,
  ...notifyFields,
});

/**
 * A webhook that signals instead of starting (`signal:` instead of `worker:`): a
 * verified delivery is the event `event` for every run waiting for it under the
 * correlation key at the JSON pointer `key` (ctx.waitForEvent, wait_for_event).
 */
export const signalTriggerSchema = z.strictObject({
  signal: z.strictObject({ event: z.string().regex(EVENT_NAME, "must be 1-64 characters of A-Z a-z 0-9 _ . -"), key: pointer }),
  verify: verification,
  filter: z.record(z.string(), z.union([scalar, z.array(scalar).min(1)])).default({}),
});

/** A webhook trigger that starts a run. */
export type Trigger = z.output<typeof triggerSchema> & { name: string };
/** A webhook trigger that signals waiting runs. */
export type SignalTrigger = z.output<typeof signalTriggerSchema> & { name: string };
/** What `POST /hooks/<name>` may be: it starts a run, or signals waiting ones. */
export type HookTrigger = Trigger | SignalTrigger;
export type Triggers = ReadonlyMap<string, HookTrigger>;

/** A Slack slash command as its app defines it. */
export const SLASH_COMMAND = /^\/[a-z0-9_-]{1,31}$/;

const approvalMode = z.enum(["ask", "approve_all", "reject_all"]).default("ask");

/** `schedule: "0 6 * * *"` (UTC): started by the Cron Trigger with exactly that expression in wrangler.toml. */
export const scheduleTriggerSchema = z.strictObject({
  worker: z.string().regex(TOOL_NAME),
  schedule: z.string().superRefine((v, ctx) => {
    const problem = cronProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  /** The worker's input as is; `{{scheduled_time}}` in a string becomes the event's time (ISO 8601, UTC). */
  input: z.json().default({}),
  /** The runs' attributes, as written. */
  attributes: attributesSchema(MAX_ATTRIBUTES, "attributes").default({}),
  approval_mode: approvalMode,
  budget: budgetSchema.optional(),
  /** Its runs at once: the trigger is one key (docs/triggers.md, "Email and schedule triggers"). */
  concurrency: scheduleConcurrencySchema,
  ...notifyFields,
});

/**
 * The largest `max_bytes` an email trigger may set. Email Routing hands over up to
 * 25 MiB, but the message is read whole and parsed with its attachments decoded
 * (raw bytes, decoded attachments and UTF-16 text side by side: several times its
 * size) in an isolate whose 128 MB also holds the app and every other request it
 * serves at the moment.
 */
export const MAX_EMAIL_BYTES = 10 * 1024 * 1024;

/**
 * `email: {to, allow_from}`: a message to that address from an allowed sender starts the worker.
 * `reply: true`: the run's answers are mailed back to the sender, whose replies continue it.
 */
export const emailTriggerSchema = z.strictObject({
  worker: z.string().regex(TOOL_NAME),
  email: z.strictObject({
    to: z
      .string()
      .regex(ADDRESS, "must be one address such as support@example.com")
      .transform((a) => a.toLowerCase()),
    allow_from: z.array(z.string().regex(ALLOW_FROM, 'entries are an address or "*@domain"')).min(1),
    /** Larger messages are rejected before they are read; at most MAX_EMAIL_BYTES. */
    max_bytes: z
      .number()
      .int()
      .positive()
      .max(MAX_EMAIL_BYTES, `at most ${MAX_EMAIL_BYTES} (10 MiB): a message is parsed in memory, attachments and all, within the Worker's 128 MB`)
      .default(1024 * 1024),
    reply: z.boolean().default(false),
    /** Refuse a message unless the receiving MTA's topmost Authentication-Results says dmarc=pass (src/triggers/dmarc.ts). */
    require_dmarc: z.boolean().default(false),
  }),
  approval_mode: approvalMode,
  budget: budgetSchema.optional(),
  ...notifyFields,
});

/**
 * `slack: {command: /ask}`: the signed slash command starts the worker with its text as the input
 * (`channels`: only in these conversation ids); a reply in the run's thread continues it (docs/triggers.md, "Slack").
 */
export const slackTriggerSchema = z.strictObject({
  worker: z.string().regex(TOOL_NAME),
  slack: z.strictObject({
    command: z.string().regex(SLASH_COMMAND, "must be a slash command such as /ask (1-31 of a-z 0-9 _ -)"),
    channels: z
      .array(z.string().regex(/^[CGD][A-Z0-9]{8,20}$/, "must be a channel id such as C0123ABCD"))
      .min(1)
      .max(100)
      .optional(),
  }),
  approval_mode: approvalMode,
  budget: budgetSchema.optional(),
});

export type ScheduledTrigger = z.output<typeof scheduleTriggerSchema> & { name: string };
export type SlackTrigger = z.output<typeof slackTriggerSchema> & { name: string };
export type EmailTrigger = z.output<typeof emailTriggerSchema> & { name: string };

/** A trigger is exactly one kind, told apart by its key. */
const KINDS = { verify: "webhook", schedule: "schedule", email: "email", slack: "slack" } as const;

/** The kind of a raw trigger entry, or why it has none. */
function kindOf(value: unknown): (typeof KINDS)[keyof typeof KINDS] | string {
  const keys = typeof value === "object" && value ? Object.keys(KINDS).filter((k) => k in value) : [];
  if (keys.length === 1) return KINDS[keys[0] as keyof typeof KINDS];
  return `a trigger has exactly one of verify (webhook), schedule, email or slack; this one has ${keys.length ? keys.join(" and ") : "none"}`;
}

/**
 * Parses `triggers.yaml` (trigger name → trigger) against the catalog: every
 * problem is a `WorkerFileError` naming the file and field. An unknown worker that
 * `mayMeanRefused` (a worker file refused for its name) is not reported again.
 * `parse` reads the text (YAML as written, JSON as bundled).
 */
export function parseTriggers(
  file: string,
  text: string,
  parse: ParseData,
  catalog: Catalog,
  mayMeanRefused = (_matches: (name: string) => boolean) => false,
): ParsedTriggers {
  const triggers = new Map<string, HookTrigger>();
  const schedules = new Map<string, ScheduledTrigger>();
  const emails = new Map<string, EmailTrigger>();
  const slacks = new Map<string, SlackTrigger>();
  let raw: unknown;
  try {
    raw = parse(text) ?? {};
  } catch (err) {
    return { triggers, schedules, emails, slacks, problems: [new WorkerFileError(file, "(file)", malformed(err))] };
  }
  if (typeof raw !== "object" || Array.isArray(raw))
    return { triggers, schedules, emails, slacks, problems: [new WorkerFileError(file, "(file)", "must map trigger names to triggers")] };
  const problems: WorkerFileError[] = [];
  const findWorker = workerLookup(file, catalog, mayMeanRefused);
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!TOOL_NAME.test(name)) {
      problems.push(new WorkerFileError(file, name, "trigger names are 1-64 characters of a-z A-Z 0-9 _ - (they are part of /hooks/<name>)"));
      continue;
    }
    const kind = kindOf(value);
    const keep = <T>(map: Map<string, T>, result: T | WorkerFileError[]) => (Array.isArray(result) ? problems.push(...result) : map.set(name, result));
    if (kind === "schedule") {
      keep(schedules, parseScheduleTrigger(file, name, value, findWorker));
      continue;
    }
    if (kind === "email") {
      keep(emails, parseEmailTrigger(file, name, value, findWorker));
      continue;
    }
    if (kind === "slack") {
      keep(slacks, parseSlackTrigger(file, name, value, findWorker));
      continue;
    }
    if (kind !== "webhook") {
      problems.push(new WorkerFileError(file, name, kind));
      continue;
    }
    if (typeof value === "object" && value && "signal" in value) {
      keep(triggers, parseSignalTrigger(file, name, value));
      continue;
    }
    const parsed = triggerSchema.safeParse(value);
    if (!parsed.success) {
      problems.push(...issuesToErrors(file, parsed.error, name));
      continue;
    }
    const worker = findWorker(name, parsed.data.worker);
    if (Array.isArray(worker)) {
      problems.push(...worker);
      continue;
    }
    const flow = flowProblem(parsed.data, worker);
    if (flow) {
      problems.push(new WorkerFileError(file, `${name}.${flow.field}`, flow.message));
      continue;
    }
    // A batched debounce starts its run with {batch: [each delivery's input]}: the mapping fills the batch's items.
    const batched = parsed.data.debounce?.batch;
    const props = (batched ? batchItems(worker.input.properties) : worker.input.properties) as Record<string, unknown> | undefined;
    for (const field of Object.keys(parsed.data.input)) {
      if (props && !(field in props))
        problems.push(
          new WorkerFileError(
            file,
            `${name}.input.${field}`,
            `worker "${worker.name}" has no input field "${field}"${batched ? " in its batch's items" : ""}; its fields: ${Object.keys(props).join(", ")}`,
          ),
        );
    }
    triggers.set(name, { ...parsed.data, name });
  }
  return { triggers, schedules, emails, slacks, problems };
}

/** The item properties of a worker's `batch` input (a batched debounce's), if its schema says. */
function batchItems(properties: unknown): unknown {
  const batch = (properties as Record<string, { items?: { properties?: unknown } }> | undefined)?.batch;
  return batch?.items?.properties;
}

export interface ParsedTriggers {
  /** Webhooks (`POST /hooks/<name>`): starting runs or signalling them. */
  triggers: Map<string, HookTrigger>;
  schedules: Map<string, ScheduledTrigger>;
  emails: Map<string, EmailTrigger>;
  slacks: Map<string, SlackTrigger>;
  problems: WorkerFileError[];
}

/** Trigger name and worker name → the worker, or the problem at `<name>.worker` naming the known ones. */
type WorkerLookup = (name: string, worker: string) => CatalogWorker | WorkerFileError[];

/** No problem for a name that may be a worker whose file was refused for its own name (reported there). */
function workerLookup(file: string, catalog: Catalog, mayMeanRefused: (matches: (name: string) => boolean) => boolean): WorkerLookup {
  return (name, worker) =>
    catalog.get(worker) ??
    (mayMeanRefused((n) => n === worker)
      ? []
      : [new WorkerFileError(file, `${name}.worker`, `unknown worker "${worker}"; known: ${[...catalog.workers.keys()].sort().join(", ")}`)]);
}

/** Does `input` fit the worker's input schema? Else a problem at `field`. */
function inputProblem(file: string, field: string, worker: CatalogWorker, input: unknown, what: string): WorkerFileError | null {
  const value = startInput(worker, input);
  const parsed = validatorFor(worker.input).safeParse(value);
  return parsed.success
    ? null
    : new WorkerFileError(file, field, `${what} does not match the input schema of worker "${worker.name}" (${worker.file}): ${describeIssues(parsed.error)}`);
}

function parseScheduleTrigger(file: string, name: string, value: unknown, findWorker: WorkerLookup): ScheduledTrigger | WorkerFileError[] {
  const parsed = scheduleTriggerSchema.safeParse(value);
  if (!parsed.success) return issuesToErrors(file, parsed.error, name);
  const worker = findWorker(name, parsed.data.worker);
  if (Array.isArray(worker)) return worker;
  // Checked now with a sample time, so a schedule never fires into a refused start.
  const problem = inputProblem(file, `${name}.input`, worker, withScheduledTime(parsed.data.input, new Date(0).toISOString()), "the input");
  return problem ? [problem] : { ...parsed.data, name };
}

function parseSignalTrigger(file: string, name: string, value: unknown): SignalTrigger | WorkerFileError[] {
  if (typeof value === "object" && value && "worker" in value)
    return [new WorkerFileError(file, name, "a trigger has worker (it starts a run) or signal (it wakes waiting runs), not both")];
  const parsed = signalTriggerSchema.safeParse(value);
  return parsed.success ? { ...parsed.data, name } : issuesToErrors(file, parsed.error, name);
}

function parseEmailTrigger(file: string, name: string, value: unknown, findWorker: WorkerLookup): EmailTrigger | WorkerFileError[] {
  const parsed = emailTriggerSchema.safeParse(value);
  if (!parsed.success) return issuesToErrors(file, parsed.error, name);
  const worker = findWorker(name, parsed.data.worker);
  if (Array.isArray(worker)) return worker;
  if (parsed.data.email.reply && worker.code)
    return [new WorkerFileError(file, `${name}.email.reply`, `"${worker.name}" is a code function: only an LLM worker converses (reply: true)`)];
  const problem = inputProblem(file, `${name}.worker`, worker, SAMPLE_EMAIL_INPUT, `a message's input ({${Object.keys(SAMPLE_EMAIL_INPUT).join(", ")}})`);
  return problem ? [problem] : { ...parsed.data, name };
}

function parseSlackTrigger(file: string, name: string, value: unknown, findWorker: WorkerLookup): SlackTrigger | WorkerFileError[] {
  const parsed = slackTriggerSchema.safeParse(value);
  if (!parsed.success) return issuesToErrors(file, parsed.error, name);
  const worker = findWorker(name, parsed.data.worker);
  if (Array.isArray(worker)) return worker;
  if (worker.code) return [new WorkerFileError(file, `${name}.worker`, `"${worker.name}" is a code function: only an LLM worker converses in a thread`)];
  const problem = inputProblem(file, `${name}.worker`, worker, "the command's text", "a slash command's text (a string)");
  return problem ? [problem] : { ...parsed.data, name };
}
