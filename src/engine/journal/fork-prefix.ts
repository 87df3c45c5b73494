import { MAX_FORK_KEY } from "../../api/bounds";
import { approvalKey, childEndKey, gatedStep, isUndoing, parseKey, within, type KeyGrammar } from "./keys";

export { MAX_FORK_KEY };

/**
 * Why `key` cannot be a step of a run whose root worker is `root` (a fork point asked
 * for, or a row about to be copied), or undefined. A fork point is only ever looked up
 * as a whole key, never followed as a path; this turns away what no journal can hold
 * before any lookup: text outside the grammar, outside the root's frame, or with an
 * empty, "." or ".." segment (which no builder of grammar 2 writes; grammar 1 put the
 * model's tool-call ids in keys as they came).
 */
export function keyProblem(key: string, root: string, grammar: KeyGrammar): string | undefined {
  if (key.length > MAX_FORK_KEY) return `is ${key.length} characters long, over ${MAX_FORK_KEY}`;
  if (key === root || !within(key, root)) return `is not a step under the run's root worker "${root}"`;
  if (grammar !== 1 && key.split("/").some((s) => s === "" || s === "." || s === "..")) return `has an empty, "." or ".." segment`;
  if (parseKey(key).kind === "other") return "is not a journal step key (the steps are listed by GET /runs/:id/journal)";
  return undefined;
}

/**
 * Which steps of a prefix a fork copies (the prefix is defined in keys.ts): all but a
 * decision or notification whose gated step is not in `prefix`, so a call the fork runs
 * again is asked about again. A question's answer (under its `human:<n>` effect) gates
 * nothing: it is the effect, done before `at`, so it is copied like any effect (else the
 * fork would ask the person again), and its email with it. A question whose answer
 * came after `at` is asked again in the fork: its email is not copied either, or the
 * fork would wait for an answer to a question it never sent. Not in grammar 1, whose
 * keys hold tool-call ids raw: a model could name a call `human:1` to keep its approval.
 */
export function copiedFrom(prefix: ReadonlySet<string>, grammar: KeyGrammar): (key: string) => boolean {
  return (key) => {
    if (!ownedByTheFork(key, prefix)) return false;
    const question = grammar === 1 ? undefined : questionStep(key);
    if (question) return question.kind === "approval" || prefix.has(approvalKey(question.call));
    const gated = gatedStep(key);
    return gated === undefined || prefix.has(gated);
  };
}

/**
 * What stays the source run's: the undos of its effects and its undoing (a fork that fails
 * undoes only what it made itself), and a child run it started whose end is not in the
 * prefix (that child tells its end to the source; the fork starts its own).
 */
function ownedByTheFork(key: string, prefix: ReadonlySet<string>): boolean {
  const p = parseKey(key);
  if (p.kind === "undo" || p.kind === "compensation") return false;
  if ((p.kind === "result" || p.kind === "approval" || p.kind === "notify") && isUndoing(p.call)) return false;
  if (p.kind === "effect" && p.effect === "spawn") return prefix.has(childEndKey(key));
  return true;
}

/** A question's answer (`<call>/human:<n>/approval`) or its email (`…/notify`), with the question's path. */
function questionStep(key: string): { kind: "approval" | "notify"; call: string } | undefined {
  const p = parseKey(key);
  if (p.kind !== "approval" && p.kind !== "notify") return undefined;
  const q = parseKey(p.call);
  return q.kind === "effect" && q.effect === "human" ? { kind: p.kind, call: p.call } : undefined;
}
