import { messageOf, nondeterministic, propagates, RunError } from "../errors";
import { hash30 } from "../journal/fingerprint";
import { MAX_STEP_BYTES } from "../journal/bounds";
import type { Journal } from "../journal/journal";
import { costOf } from "./usage";
import type { Message, Model, ModelRequest, ModelResolver, ModelResponse } from "../types/model";
import type { PriceTable, UsageSink } from "../types/usage";

/**
 * A model response as the journal keeps it: with what it cost when it was made, and
 * `fp`, its request's fingerprint (`requestFingerprint`; absent in older journals).
 * Should how a request is built change, a later version records its own `fpv` and
 * compares only fingerprints of its version.
 */
export type RecordedResponse = ModelResponse & { model: string; costUsd: number; fp?: number };

/** Why a model's answer cannot be its journal step (here, and where a queue consumer delivers it). */
export const answerTooLarge = (model: string, bytes: number) =>
  `model ${model} answered with ${bytes} bytes (text and tool calls, as JSON), over the journal's bound of ${MAX_STEP_BYTES} bytes per step; ask for a shorter answer or have it written in parts by tools`;

/** What a model step needs of its run and its caller (call-frame.ts `frameModels` makes one for a frame). */
export interface ModelServices {
  journal: Journal;
  models: ModelResolver;
  prices: PriceTable;
  /** Checks the run's budget before a request under `key` is made: a promise only when over budget with `on_exceed: ask` (budget.ts). */
  budget: (key: string) => void | Promise<void>;
  /** The calling worker's file, for errors. */
  file: string;
}

export interface ModelStep extends ModelServices {
  /** The step's journal key (journal/keys.ts `modelKey`, or a ctx effect's). */
  key: string;
  model: string;
  request: ModelRequest;
  /** Where the response's usage is added (also on replay). */
  usage: UsageSink;
  /** The request's fingerprint (`requestFingerprint`): a replay that asks something else at `key` fails. */
  fp: number;
}

/** One model request as a journal step: budget checked first, usage added (also on replay). */
export async function modelStep({ journal, models, prices, budget, file, key, model, request, usage, fp }: ModelStep): Promise<RecordedResponse> {
  // Unrecorded, the answer would be requested (and paid for) again on every retry: the run ends here.
  // The journal calls this only when the answer is over its bound, with the size of the JSON it made.
  const tooLarge = (recorded: RecordedResponse, bytes: number): never => {
    addUsage(usage, recorded);
    throw new RunError("too_large", `${file}: ${answerTooLarge(model, bytes)}`, true);
  };
  const failed = (err: unknown) => {
    if (propagates(err)) return err; // a signal (the request was handed off): not the model's failure
    return new RunError("model_error", `${file}: model ${model} failed: ${messageOf(err)}`, true, { cause: err });
  };
  const res = await journal.step<RecordedResponse>(
    key,
    async () => {
      let m: Model;
      let r: ModelResponse;
      try {
        m = models(model);
      } catch (err) {
        throw failed(err);
      }
      // Checked when the request is made, not again while a request handed off waits for its answer.
      if (!m.requested?.(key)) {
        const asking = budget(key);
        if (asking) await asking;
      }
      try {
        r = await m.request(keyed(request, key));
      } catch (err) {
        throw failed(err);
      }
      return recordedResponse(r, model, costOf(model, r.usage.inputTokens, r.usage.outputTokens, prices), fp);
    },
    tooLarge,
  );
  if (res.fp !== undefined && res.fp !== fp && !journal.inherited(key))
    throw nondeterministic(
      key,
      `a request #${res.fp.toString(36)}`,
      `another request #${fp.toString(36)}`,
      "The messages a model step is asked with must be those it was recorded for: a worker's instructions and input come from the definitions the run started on, a ctx.llmAsk's prompt from code that must ask the same on replay",
    );
  addUsage(usage, res);
  return res;
}

/**
 * A model request's messages, hashed as they are built: each message's role and text,
 * tool calls and results (an attachment by name, type and size). Not the model or the
 * tools offered, which a deploy may change under a paused run (DEFAULT_MODEL, a kind's
 * new tool) while its recorded answers stand.
 */
export function absorb(h: number, m: Message): number {
  h = hash30(m.role, h);
  const c = m.content;
  if (typeof c === "string") h = hash30(c, h);
  else if (c) for (const p of c) h = hash30(p.type === "text" ? p.text : `${p.name}\u0000${p.mime}\u0000${p.size}`, h);
  if (m.role === "assistant" && m.toolCalls) for (const t of m.toolCalls) h = hash30(t.arguments, hash30(t.name, h));
  return m.role === "tool" ? hash30(m.toolCallId, h) : h;
}

/** The request as sent, with its journal key; each field named for the reason below (typed so a new field is not left out). */
function keyed(request: ModelRequest, key: string): ModelRequest {
  const sent: { [K in keyof Required<ModelRequest>]: ModelRequest[K] } = {
    messages: request.messages,
    tools: request.tools,
    output: request.output,
    onDelta: request.onDelta,
    key,
  };
  return sent;
}

/**
 * The response as its journal step keeps it, each field named: V8 makes a spread copy
 * (`{ ...r, model }`) on a slow path here, and a 10-turn run took 1.2× as long with it
 * (bench/ratio-probe.mjs A/B). Typed so that a field added to `ModelResponse` must be named here too.
 */
function recordedResponse(r: ModelResponse, model: string, costUsd: number, fp: number): RecordedResponse {
  const recorded: { [K in keyof Required<RecordedResponse>]: RecordedResponse[K] } = {
    text: r.text,
    toolCalls: r.toolCalls,
    usage: r.usage,
    streamRefused: r.streamRefused, // undefined mostly: not in the stored JSON
    model,
    costUsd,
    fp,
  };
  return recorded;
}

const addUsage = (usage: UsageSink, res: RecordedResponse) =>
  usage.add({ requests: 1, inputTokens: res.usage.inputTokens, outputTokens: res.usage.outputTokens, costUsd: res.costUsd });

/** `ctx.llmAsk`: one model call, no tools. */
export async function askModel(ask: ModelServices & { key: string; model: string; usage: UsageSink; prompt: string; system?: string }): Promise<string> {
  const { prompt, system, ...step } = ask;
  const messages: Message[] = [...(system ? [{ role: "system" as const, content: system }] : []), { role: "user", content: prompt }];
  const fp = messages.reduce(absorb, 0);
  const res = await modelStep({ ...step, request: { messages, tools: [] }, fp });
  return res.text ?? "";
}
