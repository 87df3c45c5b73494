import { checkBudget } from "./budget";
import { messageOf, propagates, RunError } from "./errors";
import { MAX_STEP_BYTES } from "./journal/bounds";
import type { RunServices } from "./run-services";
import { costOf, type UsageMeter } from "./usage";
import type { CallFrame } from "./types/callable";
import type { Message, Model, ModelRequest, ModelResponse } from "./types/model";

/** A model response as the journal keeps it: with what it cost when it was made. */
export type RecordedResponse = ModelResponse & { model: string; costUsd: number };

/** Why a model's answer cannot be its journal step (here, and where a queue consumer delivers it). */
export const answerTooLarge = (model: string, bytes: number) =>
  `model ${model} answered with ${bytes} bytes (text and tool calls, as JSON), over the journal's bound of ${MAX_STEP_BYTES} bytes per step; ask for a shorter answer or have it written in parts by tools`;

/** One model request as a journal step: budget checked first, usage added (also on replay). */
export async function modelStep(run: RunServices, frame: CallFrame, key: string, usage: UsageMeter, model: string, req: ModelRequest): Promise<RecordedResponse> {
  // Unrecorded, the answer would be requested (and paid for) again on every retry: the run ends here.
  // The journal calls this only when the answer is over its bound, with the size of the JSON it made.
  const tooLarge = (recorded: RecordedResponse, bytes: number): never => {
    addUsage(usage, recorded);
    throw new RunError("too_large", `${frame.worker.file}: ${answerTooLarge(model, bytes)}`, true);
  };
  const failed = (err: unknown) => {
    if (propagates(err)) return err; // a signal (the request was handed off): not the model's failure
    return new RunError("model_error", `${frame.worker.file}: model ${model} failed: ${messageOf(err)}`, true);
  };
  const res = await run.journal.step<RecordedResponse>(key, async () => {
    let m: Model;
    let r: ModelResponse;
    try {
      m = run.models(model);
    } catch (err) {
      throw failed(err);
    }
    // Checked when the request is made, not again while a request handed off waits for its answer.
    if (!m.requested?.(key)) {
      const asking = checkBudget(run, frame, key); // a promise only when over budget with onExceed: ask
      if (asking) await asking;
    }
    try {
      r = await m.request({ ...req, key });
    } catch (err) {
      throw failed(err);
    }
    return { ...r, model, costUsd: costOf(model, r.usage.inputTokens, r.usage.outputTokens, run.prices) };
  }, tooLarge);
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

