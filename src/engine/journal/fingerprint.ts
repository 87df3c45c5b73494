import { sha256Hex } from "../run/idempotency-key";
import { parseKey } from "./keys";

/**
 * What a recorded step was recorded for, so a replay that meets another call at its
 * key fails (`nondeterministic`) instead of handing it that step's value. A step's key
 * says its kind and name (`ask:3`, `step:fetch`, `turn:2/model`); the fingerprint adds
 * what the key cannot: a call's arguments, a model request's content.
 *
 * A hash of 30 bits, not a cryptographic one: it runs for every call, collisions only
 * matter between two calls of one run at one key, and a number that small is written
 * into a step's JSON on V8's fast path. What an approval is bound to is hashed with
 * SHA-256: the arguments a person approved.
 */

/** FNV-1a over the UTF-16 code units of `text`, mixed (murmur3's finalizer), in 30 bits; `seed` chains a previous hash in. */
export function hash30(text: string, seed = 0): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 2;
}

/**
 * Where a tool context carries its call's fingerprint when its maker has it cheaply: the
 * agent loop hashes the arguments' text as the model wrote it (recorded in the model's
 * answer, so the same on every replay) instead of making JSON of them again.
 */
export const CALL_FINGERPRINT = Symbol("callFingerprint");

/** The fingerprint of a tool call made with `ctx`: the one its maker gave, else `argsFingerprint(args)`. */
export const callFingerprint = (ctx: object, args: unknown): number | undefined =>
  (ctx as { [CALL_FINGERPRINT]?: number })[CALL_FINGERPRINT] ?? argsFingerprint(args);

/** A call's arguments (or a worker's input) as JSON, hashed; undefined for a value JSON cannot hold (the call fails elsewhere). */
export function argsFingerprint(args: unknown): number | undefined {
  try {
    return hash30(JSON.stringify(args ?? null));
  } catch {
    return undefined;
  }
}

/**
 * What a decision is bound to: SHA-256 of the approved call's arguments as the run
 * recorded them (`argsJson`: the approval row's JSON text, which is `JSON.stringify`
 * of the arguments the gate saw). A replay that reaches the approval with other
 * arguments fails instead of running them under it.
 */
export const approvedArgs = (argsJson: string) => sha256Hex(argsJson).slice(0, 32);

/**
 * Whether the decision under `key` is bound to the arguments it was asked with: a call's
 * approval or a question is; continuing past the budget is not (its "arguments" are the
 * usage so far, which a replay may count in another order: the decision is about the run).
 */
export const bindsArguments = (key: string) => parseKey(key).kind !== "budget_approval";

/** `approvedArgs` of arguments as the gate holds them. */
export function approvedArgsOf(args: unknown): string | undefined {
  try {
    return approvedArgs(JSON.stringify(args ?? null));
  } catch {
    return undefined;
  }
}
