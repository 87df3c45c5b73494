import type * as z from "zod";
import { WorkerFileError } from "../errors";
import { toolParameters } from "../json-schema";
import { DEFAULT_MAX_TURNS, readApproval, readToolsets, TOOL_NAME, type WorkerFileReading } from "./worker-file";
import type { ToolContext } from "../types/context";
import type { ApprovalCheck } from "../types/toolset";
import type { CodeFunction } from "../types/worker";

/** One `toolsets` entry, as in a worker file: `{use: <kind>, scope?, readonly?, ...config}`. */
type InstanceConfig = { use: string; scope?: "call" | "run" | "global"; readonly?: boolean; [config: string]: unknown };

export interface FunctionSpec<I extends z.ZodType, O extends z.ZodType> {
  /** Unique among workers and functions: the tool name callers see. */
  name: string;
  /** The tool description a calling model reads. */
  description: string;
  /** Checked when it is called; as JSON Schema, the tool's parameters. */
  input: I;
  /** Checked on return, when given. */
  output?: O;
  /** Same shape as a worker file's `toolsets` (instances, and `workers: [...]`): what `ctx.callTool` reaches. */
  toolsets?: { [instance: string]: InstanceConfig | string[] };
  /** Same shape as a worker file's `approval` (a policy or rules per exposed tool, `notify`). */
  approval?: Record<string, unknown>;
  /**
   * Whether a worker's call of this function asks first, decided from its input (as
   * `input` parsed it): true asks the caller's approver, false runs it; a throw, a
   * rejection or anything else asks. Default: no asking (a function's own tools gate).
   * The caller's `approval:` entry for the function wins. Decide from `input` and `check` alone.
   */
  needsApproval?(input: z.output<I>, check: ApprovalCheck): boolean | Promise<boolean>;
  /**
   * The body. Runs again on replay after a pause: every effect must go through
   * `ctx` (callTool, callWorker, llmAsk, step, now, randomId), called in the same
   * order, so the journal answers what already happened.
   */
  run(input: z.output<I>, ctx: ToolContext): Promise<z.input<O>> | z.input<O>;
}

export const defineFunction = <I extends z.ZodType, O extends z.ZodType = z.ZodType<unknown>>(spec: FunctionSpec<I, O>): CodeFunction =>
  spec as unknown as CodeFunction;

/** How errors name a function (where a worker's name its file). */
export const functionLabel = (name: string) => `function "${name}"`;

/**
 * A function's declared part read like a worker file's frontmatter, with the same
 * errors, so the catalog checks it with the same stages (kinds, configs, workers:,
 * tool names, approval) as every `.worker` file.
 */
export function readFunction(fn: CodeFunction): WorkerFileReading {
  const file = functionLabel(String(fn.name));
  const problems: WorkerFileError[] = [];
  const named = typeof fn.name === "string" && TOOL_NAME.test(fn.name);
  if (!named) problems.push(new WorkerFileError(file, "name", "must be 1-64 characters of a-z A-Z 0-9 _ - (the OpenAI tool-name rule)"));
  if (typeof fn.description !== "string" || !fn.description.trim())
    problems.push(new WorkerFileError(file, "description", "required: callers' models read it"));
  let input: Record<string, unknown> = { type: "object" };
  try {
    input = toolParameters(fn.input);
  } catch (err) {
    problems.push(new WorkerFileError(file, "input", `a zod schema that converts to JSON Schema: ${(err as Error).message}`));
  }
  const { toolsets, workers, workersRun, complete } = readToolsets(file, fn.toolsets ?? {}, problems);
  const { approval, notify, slack, followUp, deciders } = readApproval(file, fn.approval ?? {}, problems);
  return {
    spec: {
      file,
      name: String(fn.name),
      description: fn.description,
      input,
      maxTurns: DEFAULT_MAX_TURNS,
      toolsets,
      workers,
      ...(workersRun ? { workersRun } : {}),
      approval,
      ...(deciders ? { deciders } : {}),
      notify,
      ...(slack ? { slack } : {}),
      ...(followUp ? { followUp } : {}),
      instructions: "",
    },
    problems,
    named,
    toolsetsComplete: complete,
  };
}
