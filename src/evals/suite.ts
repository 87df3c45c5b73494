import * as z from "zod";
import { WorkerFileError } from "../engine/errors";
import { issuesToErrors } from "../engine/catalog/worker-file";
import { malformed, type ParseData } from "../engine/data-files";
import { checkSchemas, type Check } from "./checks";
import { terminalText } from "./terminal-text";

/** A literal the request must contain (`if_asked`): bounded, matched as text, never a regex. */
const literal = z.string().min(1).max(500);

/** One answer of a scripted model, in the model server's shape (src/testing/turns.ts). */
const scriptedTurn = z.strictObject({
  text: z.string().max(100_000).optional(),
  tool_calls: z
    .array(z.strictObject({ name: z.string().min(1).max(128), arguments: z.unknown() }))
    .max(64)
    .optional(),
  usage: z.strictObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).optional(),
});

/**
 * A scripted answer, optionally conditional: with `if_asked`, it is given only when the
 * request (instructions, input, tool results) contains that literal, else `otherwise`.
 * How an offline suite notices a prompt that no longer asks for something.
 */
export const scriptedReply = scriptedTurn
  .extend({ if_asked: literal.optional(), otherwise: scriptedTurn.optional() })
  .refine((r) => (r.if_asked === undefined) === (r.otherwise === undefined), "if_asked and otherwise go together");
export type ScriptedTurnSpec = z.infer<typeof scriptedTurn>;
export type ScriptedReplySpec = z.infer<typeof scriptedReply>;

/**
 * A tool's canned result in an eval: `args` (a pattern, checks.ts `matchArgs`) picks
 * which calls it answers; the first matching stub of the tool wins.
 */
const stub = z
  .strictObject({ args: z.unknown().optional(), result: z.unknown().optional(), error: z.string().max(10_000).optional() })
  .refine((s) => (s.result === undefined) !== (s.error === undefined), "a stub has a result or an error, not both");
export type ToolStub = z.infer<typeof stub>;
const stubs = z.record(z.string().min(1).max(128), z.union([stub, z.array(stub).min(1).max(100)]));

const approvalMode = z.enum(["ask", "approve_all", "reject_all"]);

const check = z.record(z.string(), z.unknown()).transform((raw, ctx): Check => {
  const names = Object.keys(raw);
  const name = names[0] as keyof typeof checkSchemas | undefined;
  if (names.length !== 1 || !name || !Object.hasOwn(checkSchemas, name)) {
    ctx.addIssue({
      code: "custom",
      message: `a check is one of ${Object.keys(checkSchemas).join(", ")} (one key per check); got ${names.join(", ") || "none"}`,
    });
    return z.NEVER;
  }
  const parsed = checkSchemas[name].safeParse(raw[name]);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [name, ...issue.path] } as z.core.$ZodRawIssue);
    return z.NEVER;
  }
  return { kind: name, spec: parsed.data } as Check;
});

const caseSchema = z.strictObject({
  name: z.string().min(1).max(200),
  /** Default: the suite's worker. */
  worker: z.string().min(1).optional(),
  input: z.unknown(),
  /** A model for every worker of the run (`<provider>:<model>`); default the suite's, else each worker's own. */
  model: z.string().min(1).optional(),
  /** Scripted answers per worker name, in order: the whole run is then played offline. */
  script: z.record(z.string().min(1), z.array(scriptedReply).max(200)).optional(),
  tools: stubs.optional(),
  approval_mode: approvalMode.optional(),
  /**
   * The source run's decisions with their audit, as `GET /runs/:id/eval-case` writes them
   * (who, the way, when, the arguments' hash, an edit or an answer): the record of the
   * incident the case replays. Read and bounded, never checked or acted on.
   */
  decisions: z
    .array(z.record(z.string().max(64), z.unknown()))
    .max(1000)
    .optional(),
  checks: z.array(check).max(100).default([]),
});
export type EvalCase = z.infer<typeof caseSchema>;

const suiteSchema = z.strictObject({
  worker: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  /** The default judge of `rubric` checks. */
  judge: z.string().min(1).optional(),
  /** Scripted judges by model name (`test:<name>`): one reply answers every rubric question. */
  judges: z.record(z.string().regex(/^test:[a-z0-9_-]+$/, "a scripted judge is named test:<name>"), scriptedReply).optional(),
  /** Values for `${NAME}` in the workers' toolsets and providers, over the environment's. */
  vars: z.record(z.string(), z.string()).optional(),
  /** Tool stubs for every case; a case's own stubs of a tool replace these. */
  tools: stubs.optional(),
  /** Default `reject_all`: an eval never performs a gated effect unless the case says so. */
  approval_mode: approvalMode.default("reject_all"),
  concurrency: z.number().int().min(1).max(32).default(4),
  /** The share of cases (0–1) that must pass. */
  threshold: z.number().min(0).max(1).default(1),
  /** Per case; a run still going then fails the case. */
  timeout_s: z.number().positive().max(3600).default(120),
  cases: z.array(caseSchema).min(1).max(1000),
});
export type EvalSuite = z.infer<typeof suiteSchema> & { file: string };

/** Reads one `evals/*.yaml` file; problems name the file and the field. */
export function parseSuite(file: string, text: string, parse: ParseData): EvalSuite {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new SuiteError([new WorkerFileError(file, "(file)", malformed(err))]);
  }
  const parsed = suiteSchema.safeParse(raw);
  if (!parsed.success) throw new SuiteError(issuesToErrors(file, parsed.error));
  const suite = { ...parsed.data, file };
  const unnamed = suite.cases.findIndex((c) => !(c.worker ?? suite.worker));
  if (unnamed >= 0) throw new SuiteError([new WorkerFileError(file, `cases.${unnamed}.worker`, "no worker: set it on the case or the suite")]);
  const clash = suite.cases.findIndex((c) => c.script && (c.model ?? suite.model));
  if (clash >= 0) throw new SuiteError([new WorkerFileError(file, `cases.${clash}.script`, "a scripted case names no model (the script is its model)")]);
  return suite;
}

/** Every problem of a suite file; the message is printed, so what the file wrote is escaped (a key may hold ESC). */
export class SuiteError extends Error {
  constructor(readonly problems: WorkerFileError[]) {
    super(terminalText(problems.map((p) => p.message).join("\n"), true));
  }
}
