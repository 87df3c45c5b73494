import { sha256Hex } from "../run/idempotency-key";

/**
 * Every journal key is built and read here, nowhere else. A key is a path of
 * segments joined by "/", from this grammar (`<frame>`: a worker or function call's
 * path, `<call>`: a tool call's or effect's path):
 *
 *   <worker name>                         the run's root frame
 *   <frame>/turn:<n>/model                a worker's model answer in turn n
 *   <frame>/turn:<n>/tool:<i>             a call: the i-th tool call of that answer (1-based)
 *   <frame>/turn:<n>/compact              the history compacted before turn n's request (run/compaction.ts):
 *                                         the stretch replaced and how; recorded before that turn's model step,
 *                                         so a replay compacts where the run did and nowhere else
 *   <frame>/turn:<n>/compact/ask:1        the summary of that stretch (`compact: summarize`): a model step
 *   <call>/<worker name>                  the frame of a worker or function that call runs
 *   <call>/(ask|call|worker|agent|now|random|human|wait|attr|schedule|spawn):<n>   the call's n-th ctx effect (agent:n
 *                                         is a frame too; human:n, a question, has its /approval and /notify below it;
 *                                         wait:n a timer or event wait, whose end the host records there;
 *                                         attr:n a ctx.setAttribute, schedule:n a ctx.schedule, spawn:n a child run started)
 *   <call>/spawn:<n>/end                  that child run's end, recorded by the host when the child tells it
 *   <call>/step:<name>                    ctx.step(name), the name encoded (below)
 *   <call>/step-error:<name>              its function's error, when it threw (the step's outcome then)
 *   <call>/result | /approval | /notify | /worker-create
 *   <call>/attempt:<n>                    the n-th try of a call with a retry policy, failed: its error and when
 *                                         the next was due (the call's outcome is still its /result, once)
 *   <call>/undo                           what undoes the effect the call made (`compensate:`), recorded with it
 *   <call>/undone                         the call that undoes it, made when the run fails (its /result, /approval)
 *   <root>/compensation                   the run failed and undoes its effects: why (a replay fails the same way)
 *   <call>/approval-rule                  the approval rule a call asked under (rules on its arguments, a
 *                                         tool's needsApproval), recorded before it asks: a replay asks again
 *   <model step>/budget/approval | /notify    continuing past the budget, asked before that request
 *   <call>/spawn:<n>/budget/approval | /notify   the same, asked before that child run is started
 *   <frame>/tools:<instance>              a dynamic instance's recorded tool list
 *   <root>/message:<n>                    the n-th user message of a conversation with the run's root
 *                                         worker (n ≥ 2: the run's input is the first), recorded by the host;
 *                                         its turns continue the root's turn count, so their keys are new
 *
 * Only the engine chooses segments: names are worker, function and instance names
 * (validated: no "/" or ":"), numbers are the engine's counters, and the one name that
 * comes from outside (a `ctx.step` key, which a kind may take from a model) is encoded
 * so it holds no "/" and stays within `MAX_STEP_NAME`. The model's own tool-call ids
 * never shape a key: they are data in the recorded answer.
 *
 * Grammar 1 (runs whose journal was started before grammar 2) wrote the model's id as
 * `tool:<id>` (with `~<index>` added to a repeated id) and `step:<name>` raw; a run
 * keeps the grammar its journal started with, passed in with the run (never guessed
 * from a key, which a model could have shaped).
 *
 * A fork's prefix (durable-objects/run/fork.ts): the steps recorded before a key `at`
 * in the run's own order (the journal's seq: the order steps completed, parallel
 * calls included), less each decision (`/approval`, `/budget/approval`), asking rule
 * (`/approval-rule`) and notification (`/notify`) whose gated step (`gatedStep`) is not
 * in it: a call that runs again in the fork is asked about again, and its approver told again (a
 * question's email and answer are its effect, and copied: fork-prefix.ts).
 */
export type KeyGrammar = 1 | 2;

/** What new runs write. */
export const KEY_GRAMMAR: KeyGrammar = 2;

const SEP = "/";

/** The effect counters of a tool context (`<call>/<kind>:<n>`). */
export type EffectKind = "ask" | "call" | "worker" | "agent" | "now" | "random" | "human" | "wait" | "attr" | "schedule" | "spawn";

/** The ctx method that takes each effect kind's numbers, as errors name it. */
export const EFFECT_METHOD: Record<EffectKind, string> = {
  ask: "llmAsk",
  call: "callTool",
  worker: "callWorker",
  agent: "llmAgent",
  now: "now",
  random: "randomId",
  human: "askHuman",
  wait: "sleep/sleepUntil/waitForEvent",
  attr: "setAttribute",
  schedule: "schedule",
  spawn: "spawn/map",
};

export const modelKey = (frame: string, turn: number) => `${frame}/turn:${turn}/model`;
export const resultKey = (call: string) => `${call}/result`;
/** The history compacted before turn `turn`'s model request in `frame`. */
export const compactKey = (frame: string, turn: number) => `${frame}/turn:${turn}/compact`;
/** The model step that summarized the stretch a compaction replaced (an `ask` effect under it: a model step everywhere one is read). */
export const summaryKey = (compact: string) => effectKey(compact, "ask", 1);
export const approvalKey = (call: string) => `${call}/approval`;
export const notifyKey = (call: string) => `${call}/notify`;
export const approvalRuleKey = (call: string) => `${call}/approval-rule`;
/** The call whose decision `key` is (`approvalKey`), else undefined. */
export const decisionCallOf = (key: string): string | undefined => (key.endsWith("/approval") ? key.slice(0, -"/approval".length) : undefined);
/** Where the host records the end of the child run the spawn under `spawn` (`<call>/spawn:<n>`) started. */
export const childEndKey = (spawn: string) => `${spawn}/end`;
export const creationKey = (call: string) => `${call}/worker-create`;
/** The failed `n`-th try of `call` (toolsets/wrappers/retrying.ts); n ≥ 1. */
export const attemptKey = (call: string, n: number) => `${call}/attempt:${n}`;
/** What undoes the effect `call` made (toolsets/wrappers/compensable.ts). */
export const undoKey = (call: string) => `${call}/undo`;
/** The call that undoes `call`'s effect, made when the run fails (run/compensate.ts): its own `/result` and `/approval` below it. */
export const undonePath = (call: string) => `${call}/undone`;
/** Whether `call` is one that undoes another's effect: its own effect is not undone in turn. */
export const isUndoing = (call: string) => lastSegment(call) === "undone";
/** That the run failed and is undoing its effects, and why it failed (`root`: the run's root call). */
export const compensationKey = (root: string) => `${root}/compensation`;
export const effectKey = (call: string, kind: EffectKind, n: number) => `${call}/${kind}:${n}`;
/** The frame of the worker or function `call` runs (`name` is a validated catalog or created worker name). */
export const calleePath = (call: string, name: string) => `${call}/${name}`;
/** A dynamic instance's recorded tool list (`instance`: a validated instance name). */
export const toolsKey = (frame: string, instance: string) => `${frame}/tools:${instance}`;
/** A conversation's `n`-th user message to the run's root worker `root` (n ≥ 2; the run's input is the first). */
export const messageKey = (root: string, n: number) => `${root}/message:${n}`;
/**
 * Every `messageKey` of `root` lies in [from, to): its prefix, and that prefix with its last
 * character (":") replaced by the next (";"). A range, not `LIKE`: SQLite bounds a pattern at
 * 50 bytes, and a root's name may have 64 characters.
 */
export const messageKeyRange = (root: string): { from: string; to: string } => ({ from: `${root}/message:`, to: `${root}/message;` });
/** The pseudo-call of continuing past the budget before the model request (or spawn) `gated`. */
export const budgetPath = (gated: string) => `${gated}/budget`;

/** The keys of one answer's tool calls: by position in grammar 2, by the model's ids in grammar 1. */
export function toolCallKeys(grammar: KeyGrammar, frame: string, turn: number, calls: readonly { id: string }[]): string[] {
  const base = `${frame}/turn:${turn}/tool:`;
  if (grammar !== 1) return calls.map((_c, i) => base + (i + 1));
  const seen = new Set<string>();
  return calls.map((c, i) => {
    let key = base + c.id;
    if (seen.has(key)) key += `~${i}`;
    seen.add(key);
    return key;
  });
}

/** Longest encoded `ctx.step` name kept readable; a longer one is cut and made unique by a hash. */
export const MAX_STEP_NAME = 128;

/** `ctx.step(name)` under `call`. */
export function stepKey(grammar: KeyGrammar, call: string, name: string): string {
  return `${call}/step:${grammar === 1 ? name : stepName(name)}`;
}

/** The error `ctx.step(name)`'s function threw, under `call` (recorded instead of a value: a step's outcome either way). */
export function stepErrorKey(grammar: KeyGrammar, call: string, name: string): string {
  return `${call}/step-error:${grammar === 1 ? name : stepName(name)}`;
}

/**
 * `name` as one segment: "%" and "/" percent-encoded, and a lone surrogate as `%uXXXX`
 * (the store keeps UTF-8, where it would come back as U+FFFD: two names one key, and
 * a replay that misses its step); injective and readable. Over `MAX_STEP_NAME`: its
 * first 64 characters then `%h` and a hash of the whole name (`%s` and a hash of the
 * encoded name when it held a lone surrogate, which the hash's UTF-8 would lose);
 * neither marker occurs in an encoded name, so a long name cannot equal a short one.
 */
function stepName(name: string): string {
  let encoded = name.includes("%") || name.includes(SEP) ? name.replaceAll("%", "%25").replaceAll(SEP, "%2F") : name;
  const wellFormed = !LONE_SURROGATE.test(encoded);
  if (!wellFormed) encoded = encoded.replace(new RegExp(LONE_SURROGATE, "g"), (c) => `%u${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (encoded.length <= MAX_STEP_NAME) return encoded;
  // Never cut a surrogate pair: half of one is not text the store keeps as written.
  const cut = (encoded.charCodeAt(63) & 0xfc00) === 0xd800 ? 63 : 64;
  return `${encoded.slice(0, cut)}${wellFormed ? `%h${sha256Hex(name).slice(0, 32)}` : `%s${sha256Hex(encoded).slice(0, 32)}`}`;
}

/** Half of a surrogate pair standing alone (no `g`: `test` keeps no state; `replace` is given a global copy). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The key the attachments a call passed to a worker are recorded under. */
export const ATTACHMENTS_STEP = "attachments";

/** What a journal key is, read from its segments. */
export type ParsedKey =
  | { kind: "model" | "compact"; frame: string; turn: number }
  | { kind: "result" | "approval" | "notify" | "creation" | "approval_rule" | "undo" | "compensation"; call: string }
  /** `spawn`: the `<call>/spawn:<n>` whose child ended. */
  | { kind: "child_end"; spawn: string }
  /** `call`: the budget pseudo-call (`budgetPath(gated)`); `gated`: the model request or spawn it comes before (`isBudgetGated`). */
  | { kind: "budget_approval"; call: string; gated: string }
  /** `failed`: the error its function threw (`step-error:<name>`). */
  | { kind: "step"; call: string; name: string; failed?: true }
  | { kind: "effect"; call: string; effect: string; n: number }
  | { kind: "attempt"; call: string; n: number }
  | { kind: "tools"; frame: string; instance: string }
  /** `frame`: the run's root worker. */
  | { kind: "message"; frame: string; n: number }
  | { kind: "other" };

const LEAVES = {
  result: "result",
  approval: "approval",
  notify: "notify",
  "worker-create": "creation",
  "approval-rule": "approval_rule",
  undo: "undo",
  compensation: "compensation",
} as const;
const OTHER: ParsedKey = { kind: "other" };

/**
 * A key's meaning, from its last segments and the grammar above: a segment is all
 * between two separators, so no name, id or counter can end one early. A budget
 * approval is `budget/approval` under a model step (`turn:<n>/model` or `ask:<n>`)
 * or a spawn (`spawn:<n>`), never any approval whose call path happens to end in "budget".
 */
export function parseKey(key: string): ParsedKey {
  const at = key.lastIndexOf(SEP);
  if (at <= 0) return OTHER;
  const parent = key.slice(0, at);
  const last = key.slice(at + 1);
  if (last === "model" || last === "compact") {
    const t = key.lastIndexOf(SEP, at - 1);
    const turn = t > 0 ? counter(key.slice(t + 1, at), "turn") : undefined;
    return turn === undefined ? OTHER : { kind: last, frame: key.slice(0, t), turn };
  }
  if (last === "end") {
    const p = parseKey(parent);
    return p.kind === "effect" && p.effect === "spawn" ? { kind: "child_end", spawn: parent } : OTHER;
  }
  const leaf = LEAVES[last as keyof typeof LEAVES];
  if (leaf) {
    if (leaf === "approval" && lastSegment(parent) === "budget") {
      const gated = parentPath(parent);
      if (gated !== undefined && isBudgetGated(gated)) return { kind: "budget_approval", call: parent, gated };
    }
    return { kind: leaf, call: parent };
  }
  const colon = last.indexOf(":");
  if (colon < 0) return OTHER;
  const word = last.slice(0, colon);
  if (word === "step") return { kind: "step", call: parent, name: last.slice(colon + 1) };
  if (word === "step-error") return { kind: "step", call: parent, name: last.slice(colon + 1), failed: true };
  if (word === "tools") return { kind: "tools", frame: parent, instance: last.slice(colon + 1) };
  const n = counter(last, word);
  if (word === "attempt") return n === undefined || n < 1 ? OTHER : { kind: "attempt", call: parent, n };
  // Only directly under the root (one segment): no deeper frame has a conversation.
  if (word === "message") return n === undefined || parent.includes(SEP) ? OTHER : { kind: "message", frame: parent, n };
  return n === undefined || !EFFECTS.has(word) ? OTHER : { kind: "effect", call: parent, effect: word, n };
}

const EFFECTS = new Set<string>(["ask", "call", "worker", "agent", "now", "random", "human", "wait", "attr", "schedule", "spawn"] satisfies EffectKind[]);

/**
 * SQL `LIKE` patterns that match every model step's key (`modelKey`: `…/model`; an
 * `ask` effect: `…/ask:<n>`), from the same segments the builders write. A prefilter
 * for a store that cannot run `parseKey`: it may match more (a `…/ask:` segment
 * further up a path), so what it selects is narrowed by `isModelStep`.
 */
export const MODEL_STEP_LIKE = [`%${SEP}model`, `%${SEP}ask:%`] as const;

/** An SQL `LIKE` pattern that matches every child run's end (`childEndKey`); more too, narrowed by `parseKey`. */
export const CHILD_END_LIKE = `%${SEP}spawn:%${SEP}end`;

/** What a key records, as a listing names it: `parseKey`'s kind, or an effect's own name (ask, now, random). */
export function stepKind(key: string): string {
  const p = parseKey(key);
  return p.kind === "effect" ? p.effect : p.kind;
}

/** A model request's key: a worker's turn or a `ctx.llmAsk`. */
export function isModelStep(key: string): boolean {
  const p = parseKey(key);
  return p.kind === "model" || (p.kind === "effect" && p.effect === "ask");
}

/** A step the run's budget is checked before (run/budget.ts `checkBudget`): a model request, or a child run's start (`spawn:<n>`). */
export function isBudgetGated(key: string): boolean {
  const p = parseKey(key);
  return p.kind === "model" || (p.kind === "effect" && (p.effect === "ask" || p.effect === "spawn"));
}

/**
 * A durable wait's end, from the key it is recorded under: a timer's or an event
 * wait's (`<call>/wait:<n>`), or a question's answer (`<call>/human:<n>/approval`).
 * `call`: the context that waited; undefined for any other key.
 */
export function waitEndOf(key: string): { kind: "wait" | "question"; call: string } | undefined {
  const p = parseKey(key);
  if (p.kind === "effect" && p.effect === "wait") return { kind: "wait", call: p.call };
  if (p.kind !== "approval") return undefined;
  const q = parseKey(p.call);
  return q.kind === "effect" && q.effect === "human" ? { kind: "question", call: q.call } : undefined;
}

/**
 * The step a decision, notification or asking rule is about: a tool call's `<call>/result`,
 * or the model request (or spawn) a budget approval comes before; undefined for any other key.
 */
export function gatedStep(key: string): string | undefined {
  const p = parseKey(key);
  if (p.kind === "budget_approval") return p.gated;
  if (p.kind === "approval_rule") return resultKey(p.call);
  if (p.kind !== "approval" && p.kind !== "notify") return undefined;
  const gated = lastSegment(p.call) === "budget" ? parentPath(p.call) : undefined;
  return gated !== undefined && isBudgetGated(gated) ? gated : resultKey(p.call);
}

/** `n` of a segment `<word>:<n>` (digits only), else undefined. */
function counter(segment: string, word: string): number | undefined {
  if (!segment.startsWith(word) || segment.charCodeAt(word.length) !== 58 /* : */ || segment.length === word.length + 1) return undefined;
  for (let i = word.length + 1; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(segment.slice(word.length + 1));
}

/**
 * Who may write a key. The engine writes every step of an activation; the run's host
 * writes what people and the world decide while the run waits: a conversation's next
 * message, a wait's end, a child run's end, a decision (`/approval`, `/budget/approval`). A decision is
 * also the engine's when nobody is asked (a remembered call, the run's approval mode):
 * the first writer wins, the other reads it back. Stores check it (the journal's key
 * is unique, and a side that writes a key it does not own is a bug, not a step).
 */
export type KeyWriter = "engine" | "host" | "either";

export function keyWriter(key: string): KeyWriter {
  const p = parseKey(key);
  if (p.kind === "message" || p.kind === "child_end" || (p.kind === "effect" && p.effect === "wait")) return "host";
  return p.kind === "approval" || p.kind === "budget_approval" ? "either" : "engine";
}

/**
 * The ctx effect slots a key lies under: each `<kind>:<n>` segment names slot `n` of the
 * context at the path before it (`f/call:3/result` → f's slot 3 is a `call`). A context
 * numbers its effects from one counter whatever their kind, so a replay that asks for
 * slot `n` as another kind than the one recorded has drifted from the recorded run.
 */
export function forEachEffectSlot(key: string, each: (call: string, n: number, kind: EffectKind) => void): void {
  let start = 0;
  while (start < key.length) {
    let end = key.indexOf(SEP, start);
    if (end < 0) end = key.length;
    const colon = key.indexOf(":", start);
    if (start > 0 && colon > start && colon < end) {
      const word = key.slice(start, colon);
      const n = EFFECTS.has(word) ? counter(key.slice(start, end), word) : undefined;
      if (n !== undefined) each(key.slice(0, start - 1), n, word as EffectKind);
    }
    start = end + 1;
  }
}

/** The last segment of a path: a frame's worker name, `agent:<n>` for an `llmAgent` call. */
export const lastSegment = (path: string) => path.slice(path.lastIndexOf(SEP) + 1);

/** The path one segment up, or undefined at the root. */
export function parentPath(path: string): string | undefined {
  const at = path.lastIndexOf(SEP);
  return at > 0 ? path.slice(0, at) : undefined;
}

/** `path` is `ancestor` or lies under it. */
export const within = (path: string, ancestor: string) => path === ancestor || (path.startsWith(ancestor) && path.charCodeAt(ancestor.length) === 47) /* / */;
