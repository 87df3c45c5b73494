import { parse as parseYaml, YAMLParseError } from "yaml";
import * as z from "zod";
import { WorkerFileError } from "./errors";
import type { JSONSchema } from "./json-schema";
import { MODEL_NAME } from "./model/model";
import type { Budget } from "./run";
import type { Policy, Scope } from "./toolsets/toolset";

/** OpenAI's rule for tool names, which worker names and tool names must follow. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

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

/** A run's spending limit; `on_exceed: ask` pauses for an approval to continue past it. */
export const budgetSchema = z.strictObject({
  max_tokens: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
  on_exceed: z.enum(["fail", "ask"]).optional().describe("fail (default): the run fails with budget_exceeded; ask: the run's approver may extend it"),
});

/** One toolset instance: `{use: <kind>, scope?, readonly?, ...kind config}`. */
const instanceSpec = z.looseObject({
  use: z.string().min(1),
  scope: z.enum(["call", "run", "global"]).optional(),
  readonly: z.boolean().optional(),
});

export const frontmatterSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME, "must be 1-64 characters of a-z A-Z 0-9 _ - (the OpenAI tool-name rule)").describe("unique; the tool name when other workers call this one"),
  description: z.string().min(1).optional().describe("the tool description other workers' models see"),
  model: z.string().regex(MODEL_NAME, 'must be "provider:model", e.g. openai:gpt-4.1-mini').optional().describe("else the caller's model, else DEFAULT_MODEL"),
  compatible_models: z.array(z.string().min(1)).min(1).optional().describe("instead of model: inherit, but only these (case-insensitive globs)"),
  input: jsonSchema.optional().describe("JSON Schema of the arguments (type: object); default {input: string}"),
  output: jsonSchema.optional().describe("JSON Schema the final answer must match"),
  max_turns: z.number().int().min(1).max(200).optional().describe("default 20"),
  // Entries are checked one by one in parseWorkerFile: a union here would report
  // "Invalid input" instead of the field that is wrong.
  toolsets: z.record(z.string().regex(TOOL_NAME, "instance names follow the tool-name rule"), z.unknown()).optional(),
  approval: z
    .looseObject({
      notify: z.email().optional(),
      remind_after: duration.optional(),
      escalate_after: duration.optional(),
      escalate_to: z.array(z.email()).min(1).max(10).optional(),
    })
    .optional(),
  budget: budgetSchema.optional().describe("default run budget; a run request's fields win"),
});

const workerList = z.array(z.string().min(1));

/** One `toolsets` entry (not `workers`), or the problems with it. */
export function parseInstanceSpec(file: string, field: string, raw: unknown): InstanceSpec | WorkerFileError[] {
  if (Array.isArray(raw)) return [new WorkerFileError(file, field, "must be {use: <kind>, ...config}; only toolsets.workers is a list")];
  const parsed = instanceSpec.safeParse(raw);
  if (!parsed.success) return issuesToErrors(file, parsed.error, field);
  const { use, scope, readonly, ...config } = parsed.data;
  return { use, scope, readonly, config };
}

export interface InstanceSpec {
  use: string;
  scope?: Scope;
  readonly?: boolean;
  /** Kind config (everything but use/scope/readonly), validated by the kind's schema. */
  config: Record<string, unknown>;
}

/** A parsed worker file. Cross-file checks (kinds, workers:, tool names) are the catalog's. */
export interface WorkerSpec {
  file: string;
  name: string;
  description?: string;
  model?: string;
  compatibleModels?: string[];
  input: JSONSchema;
  output?: JSONSchema;
  maxTurns: number;
  toolsets: Record<string, InstanceSpec>;
  /** Names or globs from `toolsets.workers`. */
  workers: string[];
  approval: Record<string, Policy>;
  notify?: string;
  /** Follow-ups of an approval nobody decided (ms after it was asked). */
  followUp?: FollowUp;
  budget?: Budget;
  instructions: string;
}

export interface FollowUp {
  remindAfterMs?: number;
  escalateAfterMs?: number;
  escalateTo?: string[];
}

export const DEFAULT_INPUT: JSONSchema = {
  type: "object",
  properties: { input: { type: "string" } },
  required: ["input"],
  additionalProperties: false,
};
export const DEFAULT_MAX_TURNS = 20;

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

/** Parses one `.worker` file; throws a list of `WorkerFileError`s. */
export function parseWorkerFile(file: string, text: string): WorkerSpec {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n([\s\S]*))?$/.exec(text);
  if (!m) throw [new WorkerFileError(file, "(frontmatter)", "a worker file starts with YAML frontmatter between two '---' lines")];
  let raw: unknown;
  try {
    raw = parseYaml(m[1]!);
  } catch (err) {
    const where = err instanceof YAMLParseError && err.linePos ? ` at line ${err.linePos[0].line + 1}` : "";
    throw [new WorkerFileError(file, "(frontmatter)", `malformed YAML${where}: ${(err as Error).message.split("\n")[0]}`)];
  }
  const parsed = frontmatterSchema.safeParse(raw ?? {});
  if (!parsed.success) throw issuesToErrors(file, parsed.error);
  const fm = parsed.data;
  const errors: WorkerFileError[] = [];
  const instructions = (m[2] ?? "").trim();
  if (!instructions) errors.push(new WorkerFileError(file, "instructions", "empty: write the worker's instructions below the frontmatter"));
  if (fm.model && fm.compatible_models) {
    errors.push(new WorkerFileError(file, "compatible_models", "cannot be used together with model: pin one model, or list compatible ones and inherit"));
  }

  const toolsets: Record<string, InstanceSpec> = {};
  let workers: string[] = [];
  for (const [name, raw] of Object.entries(fm.toolsets ?? {})) {
    if (name === "workers") {
      const list = workerList.safeParse(raw);
      if (list.success) workers = list.data;
      else errors.push(new WorkerFileError(file, "toolsets.workers", "must be a list of worker names or globs"));
    } else {
      const spec = parseInstanceSpec(file, `toolsets.${name}`, raw);
      if (Array.isArray(spec)) errors.push(...spec);
      else toolsets[name] = spec;
    }
  }

  const approval: Record<string, Policy> = {};
  const { notify, remind_after, escalate_after, escalate_to, ...policies } = fm.approval ?? {};
  if (escalate_after && !escalate_to) errors.push(new WorkerFileError(file, "approval.escalate_after", "needs approval.escalate_to: whom to escalate to"));
  if (escalate_to && !escalate_after) errors.push(new WorkerFileError(file, "approval.escalate_to", "needs approval.escalate_after: when to escalate"));
  for (const [tool, value] of Object.entries(policies)) {
    const p = policy.safeParse(value);
    if (p.success) approval[tool] = p.data;
    else errors.push(new WorkerFileError(file, `approval.${tool}`, `must be allow, ask or deny (got ${JSON.stringify(value)})`));
  }
  if (errors.length) throw errors;

  return {
    file,
    name: fm.name,
    description: fm.description,
    model: fm.model,
    compatibleModels: fm.compatible_models,
    input: fm.input ?? DEFAULT_INPUT,
    output: fm.output,
    maxTurns: fm.max_turns ?? DEFAULT_MAX_TURNS,
    toolsets,
    workers,
    approval,
    notify,
    ...(remind_after || escalate_after
      ? { followUp: { remindAfterMs: remind_after ? parseDuration(remind_after)! : undefined, escalateAfterMs: escalate_after ? parseDuration(escalate_after)! : undefined, escalateTo: escalate_to } }
      : {}),
    ...(fm.budget ? { budget: { maxTokens: fm.budget.max_tokens, maxCostUsd: fm.budget.max_cost_usd, onExceed: fm.budget.on_exceed } } : {}),
    instructions,
  };
}
