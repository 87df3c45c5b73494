import { frameModels, inFrame, openFrame, type CallServices } from "./call-frame";
import { toolContext } from "./context";
import { messageOf, pausedTogether, propagates, RunError, RunPaused } from "../errors";
import { describeIssues, validatorFor } from "../json-schema";
import { modelKey, toolCallKeys } from "../journal/keys";
import { MAX_ARGS_DEPTH, nestedDeeper } from "../journal/bounds";
import { absorb, modelStep } from "./model-step";
import { hash30 } from "../journal/fingerprint";
import { recordedMessage } from "./conversation";
import { compactHistory, DEFAULT_CONTEXT } from "./compaction";
import { withEditNote } from "../approvals/edit-note";
import { DEFAULT_INPUT } from "../catalog/worker-file";
import type { CallFrame, CallSite } from "../types/callable";
import type { AttachmentPart, ContentPart, Message } from "../types/model";
import type { Toolset } from "../types/toolset";
import type { CatalogWorker } from "../types/worker";
import type { StateKV } from "../types/state";

/**
 * Runs one LLM worker call: the model ↔ tools loop. Every model response and tool
 * result is a journal step, so calling this again on the same journal replays
 * what is recorded and continues from the first step that is not. Other workers
 * and functions are reached through `run.callables`, never from here.
 */
export async function runWorker(run: CallServices, worker: CatalogWorker, input: unknown, at: CallSite): Promise<unknown> {
  const frame = openFrame(run, worker, at);
  const checked = validatorFor(worker.input).safeParse(input);
  if (!checked.success) throw new RunError("invalid_input", `${worker.file}: input does not match the worker's input schema: ${describeIssues(checked.error)}`);
  return inFrame(run, frame, (toolset, state) => loop(run, frame, toolset, state, checked.data));
}

async function loop(run: CallServices, frame: CallFrame, toolset: Toolset, state: StateKV, input: unknown): Promise<unknown> {
  const { worker } = frame;
  // No tool call to answer yet: a toolset that cannot list its tools ends this worker call.
  const list = async () => {
    const listed = await toolset.listTools().catch((err: unknown) => {
      throw propagates(err) || err instanceof RunError
        ? err
        : new RunError("config", `${worker.file}: its tools could not be listed: ${messageOf(err)}`, false, { cause: err });
    });
    return listed.map(({ name, description, parameters }) => ({ name, description, parameters }));
  };
  let tools = await list();
  let toolNames = new Set(tools.map((t) => t.name));
  // Listed again only when a worker was created (it is a tool from the creator's next turn on).
  let listedAt = run.created.version;
  const messages: Message[] = [
    { role: "system", content: worker.instructions },
    { role: "user", content: userMessage(worker, input, frame.attachments) },
  ];
  // A request's fingerprint: what the run pinned of it (its worker's instructions, its input) and how many messages it
  // holds; the rest are the run's own recorded steps, each checked at its own key. Not the model or the tools offered:
  // a deploy may change DEFAULT_MODEL or add a tool to a kind, and the recorded answers stand.
  const asked = messages.reduce(absorb, 0);
  let outputRetried = false;
  const { journal, models, prices, budget, file } = frameModels(run, frame);
  const compacting = { journal, models, prices, budget, file };
  const context = worker.context ?? DEFAULT_CONTEXT;
  // The root worker's conversation: which user message is being answered (the input is the first), and its turns so far.
  const conversation = frame.depth === 1;
  let message = 1;
  let turnsOfMessage = 0;

  // Turns are counted across the conversation's messages, so a later message's steps get keys of their own.
  for (let turn = 1; ++turnsOfMessage <= worker.maxTurns; turn++) {
    if (run.created.version !== listedAt) {
      listedAt = run.created.version;
      tools = await list();
      toolNames = new Set(tools.map((t) => t.name));
    }
    // Over its context budget, the history is compacted first (a journal step: replay compacts where the run did).
    await compactHistory(messages, { services: compacting, usage: frame.usage, frame: frame.path, turn, policy: context, model: frame.model });
    // Each field named: spreading the frame's services into every turn's argument measurably slows the loop.
    const request = { messages: [...messages], tools, output: worker.output };
    const fp = hash30(String(messages.length), asked);
    const res = await modelStep({
      journal,
      models,
      prices,
      budget,
      file,
      key: modelKey(frame.path, turn),
      model: frame.model,
      request,
      usage: frame.usage,
      fp,
    });
    messages.push({ role: "assistant", content: res.text, toolCalls: res.toolCalls });

    if (!res.toolCalls.length) {
      const problem: Checked = worker.output ? outputProblem(worker, res.text) : { value: res.text ?? "" };
      if (!problem.error) {
        const next = conversation ? recordedMessage(journal, frame.path, message + 1) : undefined;
        if (next === undefined) return problem.value;
        message++;
        turnsOfMessage = 0;
        outputRetried = false;
        messages.push({ role: "user", content: next });
        continue;
      }
      if (outputRetried)
        throw new RunError("invalid_output", `${worker.file}: final answer does not match the output schema after one retry: ${problem.error}`);
      outputRetried = true;
      messages.push({
        role: "user",
        content: `Your final answer does not match the output schema: ${problem.error}. Answer again with only JSON that matches it.`,
      });
      continue;
    }

    // Keyed by position: the model's ids are its data (kept in its recorded answer), never part of a key.
    const keys = toolCallKeys(run.keyGrammar, frame.path, turn, res.toolCalls);
    // Each call's content, or the signal it met: every call settles before any signal stops the turn.
    const outcomes = await Promise.all(
      res.toolCalls.map(async (call, i): Promise<string | HeldSignal> => {
        if (!toolNames.has(call.name)) return `Error: unknown tool "${call.name}"; available: ${[...toolNames].join(", ") || "(none)"}`;
        let args: unknown;
        try {
          args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
        } catch {
          return `Error: the arguments for ${call.name} are not valid JSON: ${call.arguments.slice(0, 200)}`;
        }
        if (nestedDeeper(args, MAX_ARGS_DEPTH)) return `Error: the arguments for ${call.name} nest deeper than ${MAX_ARGS_DEPTH} levels`;
        const ctx = toolContext(run, frame, toolset, keys[i]!, frame.usage.child(), state, hash30(call.arguments));
        try {
          const value = await toolset.callTool(call.name, args, ctx);
          return withEditNote(journal, keys[i]!, typeof value === "string" ? value : JSON.stringify(value));
        } catch (err) {
          // Signals (approval, fatal errors, a journal that cannot write) stop the turn; never model-visible text.
          return propagates(err) ? new HeldSignal(err) : withEditNote(journal, keys[i]!, `Error: ${messageOf(err)}`);
        }
      }),
    );
    throwSignals(outcomes);
    for (let i = 0; i < outcomes.length; i++) messages.push({ role: "tool", toolCallId: res.toolCalls[i]!.id, content: outcomes[i] as string });
  }
  throw new RunError("max_turns", `${worker.file}: no final answer within max_turns (${worker.maxTurns})`);
}

/** A signal one tool call met, held until the turn's other calls settle. */
class HeldSignal {
  constructor(readonly error: unknown) {}
}

/**
 * After a turn's tool calls settle: a fatal error wins; otherwise everything any
 * call of this turn waits for (approvals, timers, events; also deep in nested
 * workers) pauses the run together.
 */
function throwSignals(outcomes: Array<string | HeldSignal>): void {
  let paused: RunPaused | undefined;
  for (const o of outcomes) {
    if (!(o instanceof HeldSignal)) continue;
    if (o.error instanceof RunPaused) paused = paused ? pausedTogether(paused, o.error) : o.error;
    else throw o.error;
  }
  if (paused) throw paused;
}

/** The input as text; with attachments, that text followed by one part per file. */
function userMessage(worker: CatalogWorker, input: unknown, attachments: AttachmentPart[] = []): string | ContentPart[] {
  const text = worker.input === DEFAULT_INPUT ? String((input as { input: string }).input) : typeof input === "string" ? input : JSON.stringify(input, null, 2);
  return attachments.length ? [{ type: "text", text }, ...attachments] : text;
}

/** A final answer as the worker returns it, or why it does not match its output schema. */
type Checked = { value?: unknown; error?: string };

function outputProblem(worker: CatalogWorker, text: string | null): Checked {
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
