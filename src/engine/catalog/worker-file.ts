import * as z from "zod";
import { WORKER_NAME as TOOL_NAME } from "../../api/bounds";
import { budgetSchema } from "../../api/common";
import { malformed, type ParseData } from "../data-files";
import { WorkerFileError } from "../errors";
import { MAX_GLOB_LENGTH } from "../glob";
import { MODEL_NAME } from "../model/model";
import type { Budget } from "../types/budget";
import type { JSONSchema } from "../types/json-schema";
import type { DeciderPolicy } from "../types/deciders";
import type { ToolPolicy } from "../types/arg-rules";
import { API_DECIDER, MAX_ADDRESS_LENGTH, MAX_DECIDERS, readDeciderEntry } from "../approvals/deciders";
import { readArgRules, RULE_KEYS } from "../approvals/arg-rules";
import { retrySchema } from "../toolsets/retry-config";
import { compensateSchema } from "../toolsets/compensate-config";
import { SLACK_TARGET } from "../slack/target";
import type { FollowUp, InstanceSpec, WorkerSpec } from "../types/worker";

/** OpenAI's rule for tool names, which worker names and tool names must follow (the API's worker name). */
export { TOOL_NAME };

const jsonSchema = z.record(z.string(), z.unknown()) as z.ZodType<JSONSchema>;
const policy = z.enum(["allow", "ask", "deny"]);

/** `30m`, `4h`, `2d`: a whole number and one unit, nothing else (no `1h30m`, no bare numbers). */
const DURATION = /^([1-9][0-9]{0,5})(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : null;
}
const duration = z.string().regex(DURATION, "must be a duration like 30m, 4h or 2d").describe("a duration like 30m, 4h or 2d");

export { budgetSchema };

/** `budget:` as written (a worker file, a run request, a trigger) → the engine's `Budget`. */
export const budgetOf = (b: z.output<typeof budgetSchema> = {}): Budget => ({ maxTokens: b.max_tokens, maxCostUsd: b.max_cost_usd, onExceed: b.on_exceed });

/** One toolset instance: `{use: <kind>, scope?, readonly?, retry?, compensate?, ...kind config}`. */
const instanceSpec = z.looseObject({
  use: z.string().min(1),
  scope: z.enum(["call", "run", "global"]).optional(),
  readonly: z.boolean().optional(),
  retry: retrySchema.optional(),
  compensate: compensateSchema.optional(),
});

/** The reserved keys of `approval:`; every other key is a tool name → policy. */
const approvalSettings = z.looseObject({
  notify: z
    .union([
      z.email(),
      z.strictObject({
        email: z.email().optional(),
        slack: z.string().regex(SLACK_TARGET, "must be a Slack channel (#ops) or a channel or user id (C0123ABCD, U0123ABCD)").optional(),
      }),
    ])
    .optional(),
  remind_after: duration.optional(),
  escalate_after: duration.optional(),
  escalate_to: z.array(z.email()).min(1).max(10).optional(),
});

/** A tool's approval naming who decides: `{ask: [lead@example.com, "*@ops.example.com"], allow_initiator: true}` (policy ask). */
export const deciderPolicySchema = z.strictObject({
  ask: z
    .array(z.string().max(MAX_ADDRESS_LENGTH))
    .min(1)
    .max(MAX_DECIDERS)
    .optional()
    .describe(`who may decide: addresses, *@domain, or ${API_DECIDER} (the API token); at most ${MAX_DECIDERS}`),
  allow_initiator: z.boolean().optional(),
  editable: z.boolean().optional(),
});

/** Mime types (`image/png`) or globs of them (`image/*`); matched without a regex. */
const mimeGlob = z
  .string()
  .regex(/^[a-z0-9*.+-]+\/[a-z0-9*.+-]+$/i, "must be a mime type or glob such as image/* or application/pdf")
  .max(100);

/** What files a worker accepts from its callers, with each call. */
export const attachmentsSchema = z.strictObject({
  max_files: z.number().int().min(1).max(20).describe("at most this many attachments per call"),
  max_bytes: z.number().int().min(1).max(20_000_000).describe("at most this many bytes of attachments per call, all together"),
  types: z.array(mimeGlob).min(1).max(50).describe("accepted types, e.g. image/*, application/pdf, text/*"),
});

/** `context:` (run/compaction.ts): bounded here, so a worker file cannot ask for a budget no model has or keep more than it summarizes. */
export const contextSchema = z
  .strictObject({
    max_tokens: z.number().int().min(2_000).max(2_000_000),
    compact: z.enum(["summarize", "window"]),
    model: z.string().regex(MODEL_NAME, 'must be "provider:model", e.g. openai:gpt-4.1-mini').optional(),
    keep_last: z.number().int().min(1).max(200).optional(),
  })
  .refine((c) => c.model === undefined || c.compact === "summarize", { message: "only compact: summarize asks a model", path: ["model"] });

export const frontmatterSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME, "must be 1-64 characters of a-z A-Z 0-9 _ - (the OpenAI tool-name rule)"),
  description: z.string().min(1).optional(),
  model: z.string().regex(MODEL_NAME, 'must be "provider:model", e.g. openai:gpt-4.1-mini').optional(),
  compatible_models: z.array(z.string().min(1).max(MAX_GLOB_LENGTH)).min(1).optional(),
  input: jsonSchema.optional(),
  output: jsonSchema.optional(),
  max_turns: z.number().int().min(1).max(200).optional(),
  // Entries are checked one by one in readWorkerFile: a union here would report
  // "Invalid input" instead of the field that is wrong.
  // Field descriptions are the editor schema's (worker-schema.ts), kept out of the deployed bundle.
  toolsets: z.record(z.string().regex(TOOL_NAME, "instance names follow the tool-name rule"), z.unknown()).optional(),
  approval: approvalSettings.optional(),
  budget: budgetSchema.optional(),
  attachments: attachmentsSchema.optional(),
  context: contextSchema.optional(),
});

const workerList = z.array(z.string().min(1));
/** `toolsets.workers` as a mapping: the names, and how a call of one runs (`child`: as a child run of its own, in its own object). */
const workerListWith = z.strictObject({ names: workerList, run: z.enum(["inline", "child"]).default("inline") });

/** One `toolsets` entry (not `workers`), or the problems with it. */
export function parseInstanceSpec(file: string, field: string, raw: unknown): InstanceSpec | WorkerFileError[] {
  if (Array.isArray(raw)) return [new WorkerFileError(file, field, "must be {use: <kind>, ...config}; only toolsets.workers is a list")];
  const parsed = instanceSpec.safeParse(raw);
  if (!parsed.success) return issuesToErrors(file, parsed.error, field);
  const { use, scope, readonly, retry, compensate, ...config } = parsed.data;
  return { use, scope, readonly, ...(retry ? { retry } : {}), ...(compensate ? { compensate } : {}), config };
}

export const DEFAULT_INPUT: JSONSchema = {
  type: "object",
  properties: { input: { type: "string" } },
  required: ["input"],
  additionalProperties: false,
};
export const DEFAULT_MAX_TURNS = 20;
/** Messages a compaction keeps at the end of the history unless `context.keep_last` says. */
export const DEFAULT_KEEP_LAST = 20;

/** A start's input as its worker takes it: a bare string is `{input}` for a worker with the default input schema (POST /runs, triggers, evals alike). */
export function startInput(worker: { input: JSONSchema }, input: unknown): unknown {
  return worker.input === DEFAULT_INPUT && typeof input === "string" ? { input } : input;
}

/** Zod issues as worker-file errors: the field is the issue's path (plus unknown keys). */
export function issuesToErrors(file: string, error: z.ZodError, prefix = ""): WorkerFileError[] {
  return error.issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean).join(".");
    if (i.code === "unrecognized_keys") {
      return new WorkerFileError(file, [path, i.keys.join(",")].filter(Boolean).join("."), `unknown key${i.keys.length > 1 ? "s" : ""}`);
    }
    return new WorkerFileError(file, path || "(frontmatter)", i.message);
  });
}

/** What could be read of one `.worker` file, and every problem found in it. */
export interface WorkerFileReading {
  /** The fields that parsed, defaults for the rest; absent when no frontmatter could be read at all. */
  spec?: WorkerSpec;
  problems: WorkerFileError[];
  /** The name parsed: only then can other files refer to this worker (else `spec.name` is the name as written, or ""). */
  named: boolean;
  /** Every `toolsets` entry parsed, so the tools this worker exposes are all known. */
  toolsetsComplete: boolean;
}

export const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A worker file's two parts: the frontmatter between its `---` lines, and the instructions below (as written). */
export function splitWorkerFile(text: string): { frontmatter: string; instructions: string } | null {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n([\s\S]*))?$/.exec(text);
  return m ? { frontmatter: m[1]!, instructions: m[2] ?? "" } : null;
}

/**
 * Reads one `.worker` file field by field, so that one bad field hides no other
 * problem: later checks (kinds, configs, workers:, approval) run on what parsed.
 * `parse` reads the frontmatter (YAML as written, JSON as bundled).
 */
export function readWorkerFile(file: string, text: string, parse: ParseData): WorkerFileReading {
  const unread = (reason: string): WorkerFileReading => ({
    problems: [new WorkerFileError(file, "(frontmatter)", reason)],
    named: false,
    toolsetsComplete: false,
  });
  const parts = splitWorkerFile(text);
  if (!parts) return unread("a worker file starts with YAML frontmatter between two '---' lines");
  let raw: unknown;
  try {
    raw = parse(parts.frontmatter) ?? {};
  } catch (err) {
    return unread(malformed(err, 1));
  }
  if (!isMapping(raw)) return unread("must be a YAML mapping of fields (name: ..., toolsets: ...)");
  return readWorkerFields(file, raw, parts.instructions);
}

/**
 * A worker's frontmatter fields, already parsed, and its instructions: the checks of
 * `readWorkerFile` after the YAML (also for definitions that never were a file).
 */
export function readWorkerFields(file: string, raw: Record<string, unknown>, body: string): WorkerFileReading {
  const errors: WorkerFileError[] = [];
  const fields = frontmatterSchema.shape;
  const unknown = Object.keys(raw).filter((k) => !(k in fields));
  if (unknown.length) errors.push(new WorkerFileError(file, unknown.join(","), `unknown key${unknown.length > 1 ? "s" : ""}`));
  const field = <K extends Exclude<keyof typeof fields, "toolsets" | "approval">>(key: K): z.output<(typeof fields)[K]> | undefined => {
    const r = fields[key].safeParse(raw[key]);
    if (r.success) return r.data as z.output<(typeof fields)[K]>;
    errors.push(...issuesToErrors(file, r.error, key));
    return undefined;
  };
  const name = field("name");
  const description = field("description");
  const model = field("model");
  const compatibleModels = field("compatible_models");
  const input = field("input");
  const output = field("output");
  const maxTurns = field("max_turns");
  const instructions = body.trim();
  if (!instructions) errors.push(new WorkerFileError(file, "instructions", "empty: write the worker's instructions below the frontmatter"));
  if (model && compatibleModels) {
    errors.push(new WorkerFileError(file, "compatible_models", "cannot be used together with model: pin one model, or list compatible ones and inherit"));
  }

  const { toolsets, workers, workersRun, complete: toolsetsComplete } = readToolsets(file, raw.toolsets ?? {}, errors);
  const { approval, notify, slack, followUp, deciders } = readApproval(file, raw.approval ?? {}, errors);
  const budget = field("budget");
  const attachments = field("attachments");
  const context = field("context");
  if (attachments && input && typeof input.properties === "object" && input.properties !== null && "attachments" in input.properties) {
    errors.push(
      new WorkerFileError(
        file,
        "input.properties.attachments",
        "a worker with attachments: gets an attachments parameter from the engine; rename this input property",
      ),
    );
  }

  return {
    spec: {
      file,
      name: name ?? (typeof raw.name === "string" ? raw.name : ""),
      description,
      model,
      compatibleModels,
      input: input ?? DEFAULT_INPUT,
      output,
      maxTurns: maxTurns ?? DEFAULT_MAX_TURNS,
      toolsets,
      workers,
      ...(workersRun ? { workersRun } : {}),
      approval,
      ...(deciders ? { deciders } : {}),
      notify,
      ...(slack ? { slack } : {}),
      ...(followUp ? { followUp } : {}),
      ...(budget ? { budget: budgetOf(budget) } : {}),
      ...(attachments ? { attachments } : {}),
      ...(context
        ? {
            context: {
              maxTokens: context.max_tokens,
              compact: context.compact,
              keepLast: context.keep_last ?? DEFAULT_KEEP_LAST,
              ...(context.model ? { model: context.model } : {}),
            },
          }
        : {}),
      instructions,
    },
    problems: errors,
    named: name !== undefined,
    toolsetsComplete,
  };
}

/** `toolsets:` entry by entry; `complete` when every entry could be read. */
export function readToolsets(file: string, raw: unknown, errors: WorkerFileError[]) {
  const toolsets: Record<string, InstanceSpec> = {};
  let workers: string[] = [];
  let workersRun: "child" | undefined;
  let complete = true;
  const problem = (...found: WorkerFileError[]) => {
    errors.push(...found);
    complete = false;
  };
  if (!isMapping(raw)) {
    problem(new WorkerFileError(file, "toolsets", "must map instance names to {use: <kind>, ...config}"));
    return { toolsets, workers, workersRun, complete };
  }
  for (const [name, entry] of Object.entries(raw)) {
    if (name === "workers") {
      const list = workerList.safeParse(entry);
      const mapping = list.success ? undefined : workerListWith.safeParse(entry);
      if (list.success) workers = list.data;
      else if (mapping?.success) {
        workers = mapping.data.names;
        if (mapping.data.run === "child") workersRun = "child";
      } else
        problem(
          new WorkerFileError(
            file,
            "toolsets.workers",
            "must be a list of worker names or globs, or {names: [...], run: child | inline} (child: each call runs as a child run)",
          ),
        );
    } else if (!TOOL_NAME.test(name)) {
      problem(new WorkerFileError(file, `toolsets.${name}`, "instance names follow the tool-name rule (1-64 of a-z A-Z 0-9 _ -)"));
    } else {
      const spec = parseInstanceSpec(file, `toolsets.${name}`, entry);
      if (Array.isArray(spec)) problem(...spec);
      else toolsets[name] = spec;
    }
  }
  return { toolsets, workers, workersRun, complete };
}

/** What `approval:` says: a policy (or rules on the arguments) per tool name, whom to notify and follow up with, and who may decide. */
export interface ApprovalReading {
  approval: Record<string, ToolPolicy>;
  notify?: string;
  /** The Slack channel or user its approvals are also posted to (`notify: {slack: "#ops"}`). */
  slack?: string;
  followUp?: FollowUp;
  deciders?: Record<string, DeciderPolicy>;
}

/**
 * `approval:` key by key: `notify`, and a policy per tool name. A mapping may hold rules
 * on the arguments (`ask_when`, `deny_when`, `otherwise`: approvals/arg-rules.ts) and
 * say who decides (`ask: [...]`, `allow_initiator`); without rules it means ask.
 */
export function readApproval(file: string, raw: unknown, errors: WorkerFileError[]): ApprovalReading {
  const approval: Record<string, ToolPolicy> = {};
  if (!isMapping(raw)) {
    errors.push(new WorkerFileError(file, "approval", "must map tool names to allow, ask or deny (and notify to an address)"));
    return { approval };
  }
  const read = approvalSettings.safeParse(raw);
  if (!read.success) errors.push(...issuesToErrors(file, read.error, "approval"));
  const { notify: notifyAs, remind_after, escalate_after, escalate_to } = read.success ? read.data : {};
  // `notify: lead@example.com`, or `notify: {email: lead@example.com, slack: "#ops"}`.
  const notify = typeof notifyAs === "object" ? notifyAs.email : notifyAs;
  const slack = typeof notifyAs === "object" ? notifyAs.slack : undefined;
  if (escalate_after && !escalate_to) errors.push(new WorkerFileError(file, "approval.escalate_after", "needs approval.escalate_to: whom to escalate to"));
  if (escalate_to && !escalate_after) errors.push(new WorkerFileError(file, "approval.escalate_to", "needs approval.escalate_after: when to escalate"));
  const deciders: Record<string, DeciderPolicy> = {};
  for (const [tool, value] of Object.entries(raw)) {
    if (tool in approvalSettings.shape) continue;
    const p = policy.safeParse(value);
    if (p.success) approval[tool] = p.data;
    else if (isMapping(value)) {
      const field = `approval.${tool}`;
      const ruleKeys = Object.keys(value).filter((k) => (RULE_KEYS as readonly string[]).includes(k));
      const who = Object.fromEntries(Object.entries(value).filter(([k]) => !ruleKeys.includes(k)));
      const rules = ruleKeys.length ? readArgRules(value) : undefined;
      if (Array.isArray(rules)) errors.push(...rules.map((p) => new WorkerFileError(file, `${field}.${p.field}`, p.reason)));
      const named = rules && !Object.keys(who).length ? undefined : readDeciderPolicy(file, field, who, errors);
      approval[tool] = rules && !Array.isArray(rules) ? rules : "ask";
      if (rules && !Array.isArray(rules) && !rules.ask_when && rules.otherwise !== "ask" && Object.keys(who).length)
        errors.push(
          new WorkerFileError(file, `${field}.${Object.keys(who)[0]}`, "names who decides, but this policy never asks (no ask_when, otherwise is not ask)"),
        );
      if (named) deciders[tool] = named;
    } else errors.push(new WorkerFileError(file, `approval.${tool}`, `must be allow, ask or deny (got ${JSON.stringify(value)})`));
  }
  const followUp =
    remind_after || escalate_after
      ? {
          remindAfterMs: remind_after ? parseDuration(remind_after)! : undefined,
          escalateAfterMs: escalate_after ? parseDuration(escalate_after)! : undefined,
          escalateTo: escalate_to,
        }
      : undefined;
  return { approval, notify, ...(slack ? { slack } : {}), followUp, ...(Object.keys(deciders).length ? { deciders } : {}) };
}

/** `{ask: [...], allow_initiator}` for one tool: entries checked and normalized (duplicates dropped); undefined if refused. */
function readDeciderPolicy(file: string, field: string, raw: Record<string, unknown>, errors: WorkerFileError[]): DeciderPolicy | undefined {
  const read = deciderPolicySchema.safeParse(raw);
  if (!read.success) {
    errors.push(...issuesToErrors(file, read.error, field));
    return undefined;
  }
  const ask = new Set<string>();
  let refused = false;
  for (const written of read.data.ask ?? []) {
    const e = readDeciderEntry(written);
    if ("problem" in e) {
      errors.push(new WorkerFileError(file, `${field}.ask`, e.problem));
      refused = true;
    } else ask.add(e.entry);
  }
  if (refused) return undefined;
  return {
    ...(read.data.ask ? { ask: [...ask] } : {}),
    ...(read.data.allow_initiator ? { allowInitiator: true } : {}),
    ...(read.data.editable === false ? { editable: false as const } : {}),
  };
}

/** Parses one `.worker` file; throws the list of its `WorkerFileError`s if it has any. */
export function parseWorkerFile(file: string, text: string, parse: ParseData): WorkerSpec {
  const { spec, problems } = readWorkerFile(file, text, parse);
  if (problems.length) throw problems;
  return spec!;
}
