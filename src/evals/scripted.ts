import { scriptedModel, type ScriptedReply } from "../engine/model/test-model";
import { parseKey } from "../engine/journal/keys";
import { workerName } from "../engine/journal/call-tree";
import { textOf } from "../engine/model/model";
import type { Model, ModelRequest } from "../engine/types/model";
import type { ScriptedReplySpec, ScriptedTurnSpec } from "./suite";

/**
 * The model of a scripted case: each worker of the run plays its own list of answers
 * in order (`script.<worker>`), whichever model its file names; the worker is read from
 * the request's journal key. A worker that asks once more than it was scripted for fails the run, naming it.
 */
export function caseScriptModel(script: Readonly<Record<string, ScriptedReplySpec[]>>): Model {
  const played = new Map<string, number>();
  return scriptedModel((req) => {
    const worker = workerOf(req);
    const n = played.get(worker) ?? 0;
    played.set(worker, n + 1);
    const reply = script[worker]?.[n];
    if (!reply) throw new Error(`the script has no answer ${n + 1} for worker "${worker}" (${script[worker]?.length ?? 0} scripted)`);
    return toReply(chosen(reply, req));
  });
}

/** A scripted judge: the same (possibly conditional) answer to every question. */
export const scriptedJudge = (reply: ScriptedReplySpec): Model => scriptedModel((req) => toReply(chosen(reply, req)));

function workerOf(req: ModelRequest): string {
  const k = req.key === undefined ? undefined : parseKey(req.key);
  if (k?.kind !== "model") throw new Error(`a scripted case answers worker turns only; asked at ${req.key ?? "an unknown step"}`);
  return workerName(k.frame);
}

/** `if_asked`: the answer when the request contains the literal, else `otherwise`. */
function chosen(reply: ScriptedReplySpec, req: ModelRequest): ScriptedTurnSpec {
  if (reply.if_asked === undefined) return reply;
  const asked = req.messages.some((m) => m.content !== null && textOf(m.content).includes(reply.if_asked!));
  return asked ? reply : reply.otherwise!;
}

function toReply(turn: ScriptedTurnSpec): ScriptedReply {
  return {
    text: turn.text,
    // A string is the arguments' raw text (to script malformed JSON), as the model server reads it.
    toolCalls: turn.tool_calls?.map((c) => (typeof c.arguments === "string" ? { name: c.name, arguments: c.arguments } : { name: c.name, args: c.arguments })),
    usage: turn.usage && { inputTokens: turn.usage.prompt_tokens, outputTokens: turn.usage.completion_tokens },
  };
}
