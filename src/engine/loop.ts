import type { CatalogWorker } from "./catalog";
import { toolContext } from "./context";
import { checkBudget } from "./budget";
import { ApprovalRequired, messageOf, propagates, RunError, type PendingApproval } from "./errors";
import { globMatcher } from "./glob";
import { MAX_STEP_BYTES, stepBytes } from "./journal/bounds";
import { describeIssues, validatorFor } from "./json-schema";
import type { AttachmentPart, ContentPart, Message, ModelRequest, ModelResponse, ModelToolCall } from "./model/model";
import type { RunServices } from "./run";
import { callScopeId, buildCallToolset } from "./toolsets/instances";
import type { Toolset } from "./toolsets/toolset";
import { costOf, type UsageMeter } from "./usage";
import { DEFAULT_INPUT } from "./worker-file";

/** One worker call in progress. */
export interface CallFrame {
  worker: CatalogWorker;
  path: string;
  depth: number;
  /** Worker names from the run's root to this call. */
  chain: string[];
  model: string;
  usage: UsageMeter;
  /** Files the caller attached; they go with the first user message. */
  attachments?: AttachmentPart[];
}

/** A model response as the journal keeps it: with what it cost when it was made. */
export type RecordedResponse = ModelResponse & { model: string; costUsd: number };

type ToolOutcome = { ok: true; content: string } | { ok: false; content: string };

/**
 * Runs one worker call: the model ↔ tools loop. Every model response and tool
 * result is a journal step, so calling this again on the same journal replays
 * what is recorded and continues from the first step that is not.
 */
export async function runWorker(
  run: RunServices,
  worker: CatalogWorker,
  input: unknown,
  at: { path: string; parent?: CallFrame; usage: UsageMeter; model?: string; attachments?: AttachmentPart[] },
): Promise<unknown> {
  const chain = [...(at.parent?.chain ?? []), worker.name];
  const depth = (at.parent?.depth ?? 0) + 1;
  if (depth > run.maxDepth) {
    throw new RunError("max_depth", `call depth ${depth} exceeds MAX_DEPTH ${run.maxDepth}: ${chain.join(" → ")}`);
  }
  const checked = validatorFor(worker.input).safeParse(input);
  if (!checked.success) throw new RunError("invalid_input", `${worker.file}: input does not match the worker's input schema: ${describeIssues(checked.error)}`);

  const frame: CallFrame = { worker, path: at.path, depth, chain, model: chooseModel(run, worker, at.model ?? at.parent?.model), usage: at.usage, attachments: at.attachments };
  const { toolset, close } = await buildCallToolset(run, frame);
  let suspended = false;
  try {
    return await loop(run, frame, toolset, checked.data);
  } catch (err) {
    suspended = propagates(err);
    throw err;
  } finally {
    await close();
    // Call-scoped state outlives a pause (the call is not over), never the call.
    if (!suspended) await run.states.clear("call", callScopeId(run.runId, frame.path), { prefix: true });
  }
}

async function loop(run: RunServices, frame: CallFrame, toolset: Toolset, input: unknown): Promise<unknown> {
  const { worker } = frame;
  // No tool call to answer yet: a toolset that cannot list its tools ends this worker call.
  const listed = await toolset.listTools().catch((err: unknown) => {
    throw propagates(err) || err instanceof RunError ? err : new RunError("config", `${worker.file}: its tools could not be listed: ${messageOf(err)}`);
  });
  const tools = listed.map(({ name, description, parameters }) => ({ name, description, parameters }));
  const toolNames = new Set(tools.map((t) => t.name));
  const messages: Message[] = [
    { role: "system", content: worker.instructions },
    { role: "user", content: userMessage(worker, input, frame.attachments) },
  ];
  const state = run.states.open("call", callScopeId(run.runId, frame.path), "~context");
  let outputRetried = false;

  for (let turn = 1; turn <= worker.maxTurns; turn++) {
    const res = await modelStep(run, frame, `${frame.path}/turn:${turn}/model`, frame.usage, frame.model, { messages: [...messages], tools, output: worker.output });
    messages.push({ role: "assistant", content: res.text, toolCalls: res.toolCalls });

    if (!res.toolCalls.length) {
      if (!worker.output) return res.text ?? "";
      const problem = outputProblem(worker, res.text);
      if (!problem.error) return problem.value;
      if (outputRetried) throw new RunError("invalid_output", `${worker.file}: final answer does not match the output schema after one retry: ${problem.error}`);
      outputRetried = true;
      messages.push({ role: "user", content: `Your final answer does not match the output schema: ${problem.error}. Answer again with only JSON that matches it.` });
      continue;
    }

    const keys = toolCallKeys(frame.path, turn, res.toolCalls);
    const settled = await Promise.allSettled(
      res.toolCalls.map(async (call, i): Promise<ToolOutcome> => {
        if (!toolNames.has(call.name)) {
          return { ok: false, content: `Error: unknown tool "${call.name}"; available: ${[...toolNames].join(", ") || "(none)"}` };
        }
        let args: unknown;
        try {
          args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
        } catch {
          return { ok: false, content: `Error: the arguments for ${call.name} are not valid JSON: ${call.arguments.slice(0, 200)}` };
        }
        const ctx = toolContext(run, frame, toolset, keys[i]!, frame.usage.child(), state);
        try {
          const value = await toolset.callTool(call.name, args, ctx);
          return { ok: true, content: typeof value === "string" ? value : JSON.stringify(value) };
        } catch (err) {
          // Signals (approval, fatal errors, a journal that cannot write) stop the turn; never model-visible text.
          if (propagates(err)) throw err;
          return { ok: false, content: `Error: ${messageOf(err)}` };
        }
      }),
    );
    throwSignals(settled);
    settled.forEach((s, i) => {
      messages.push({ role: "tool", toolCallId: res.toolCalls[i]!.id, content: (s as PromiseFulfilledResult<ToolOutcome>).value.content });
    });
  }
  throw new RunError("max_turns", `${worker.file}: no final answer within max_turns (${worker.maxTurns})`);
}

/**
 * After a turn's tool calls settle: a fatal error wins; otherwise every approval
 * asked in this turn (also deep in nested workers) suspends the run together.
 */
function throwSignals(settled: PromiseSettledResult<unknown>[]): void {
  const pending: PendingApproval[] = [];
  for (const s of settled) {
    if (s.status === "fulfilled") continue;
    if (s.reason instanceof ApprovalRequired) pending.push(...s.reason.pending);
    else throw s.reason;
  }
  if (pending.length) throw new ApprovalRequired(pending);
}

/** `<path>/turn:<n>/tool:<call id>`, made unique if a model repeats an id. */
export function toolCallKeys(path: string, turn: number, calls: ModelToolCall[]): string[] {
  const seen = new Set<string>();
  return calls.map((c, i) => {
    let key = `${path}/turn:${turn}/tool:${c.id}`;
    if (seen.has(key)) key += `~${i}`;
    seen.add(key);
    return key;
  });
}

/** One model request as a journal step: budget checked first, usage added (also on replay). */
export async function modelStep(run: RunServices, frame: CallFrame, key: string, usage: UsageMeter, model: string, req: ModelRequest): Promise<RecordedResponse> {
  const res = await run.journal.step<RecordedResponse>(key, async () => {
    await checkBudget(run, frame, key);
    let r: ModelResponse;
    try {
      r = await run.models(model).request(req);
    } catch (err) {
      throw new RunError("model_error", `${frame.worker.file}: model ${model} failed: ${messageOf(err)}`, true);
    }
    const recorded: RecordedResponse = { ...r, model, costUsd: costOf(model, r.usage.inputTokens, r.usage.outputTokens, run.prices) };
    const bytes = stepBytes(key, recorded);
    if (bytes > MAX_STEP_BYTES) {
      // Unrecorded, the answer would be requested (and paid for) again on every retry: the run ends here.
      addUsage(usage, recorded);
      throw new RunError(
        "too_large",
        `${frame.worker.file}: model ${model} answered with ${bytes} bytes (text and tool calls, as JSON), over the journal's bound of ${MAX_STEP_BYTES} bytes per step; ask for a shorter answer or have it written in parts by tools`,
        true,
      );
    }
    return recorded;
  });
  addUsage(usage, res);
  return res;
}

const addUsage = (usage: UsageMeter, res: RecordedResponse) =>
  usage.add({ requests: 1, inputTokens: res.usage.inputTokens, outputTokens: res.usage.outputTokens, costUsd: res.costUsd });

/** `ctx.llmAsk`: one model call with the caller's model, no tools. */
export async function askModel(run: RunServices, frame: CallFrame, key: string, usage: UsageMeter, prompt: string, opts: { model?: string; system?: string }): Promise<string> {
  const messages: Message[] = [...(opts.system ? [{ role: "system" as const, content: opts.system }] : []), { role: "user", content: prompt }];
  const res = await modelStep(run, frame, key, usage, opts.model ?? frame.model, { messages, tools: [] });
  return res.text ?? "";
}

/** The worker's model > the caller's > DEFAULT_MODEL, checked against compatible_models. */
function chooseModel(run: RunServices, worker: CatalogWorker, inherited: string | undefined): string {
  const model = worker.model ?? inherited ?? run.defaultModel;
  const allowed = worker.compatibleModels;
  if (allowed && !allowed.some((g) => globMatcher(g, { ignoreCase: true })(model))) {
    throw new RunError("model_not_allowed", `${worker.file}: model "${model}" is not in compatible_models (${allowed.join(", ")})`);
  }
  return model;
}

/** The input as text; with attachments, that text followed by one part per file. */
function userMessage(worker: CatalogWorker, input: unknown, attachments: AttachmentPart[] = []): string | ContentPart[] {
  const text = worker.input === DEFAULT_INPUT ? String((input as { input: string }).input) : typeof input === "string" ? input : JSON.stringify(input, null, 2);
  return attachments.length ? [{ type: "text", text }, ...attachments] : text;
}

function outputProblem(worker: CatalogWorker, text: string | null): { value?: unknown; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(unfenced(text ?? ""));
  } catch {
    return { error: "the answer is not JSON" };
  }
  const r = validatorFor(worker.output!).safeParse(value);
  return r.success ? { value: r.data } : { error: describeIssues(r.error) };
}

/**
 * The answer without a surrounding ``` or ```json fence. No regex: the answer is
 * the model's, and a fence regex backtracked for seconds on long runs of spaces.
 */
function unfenced(text: string): string {
  let t = text.trim();
  if (t.startsWith("```")) t = t.slice(t.startsWith("```json") ? 7 : 3);
  if (t.endsWith("```")) t = t.slice(0, -3);
  return t;
}
