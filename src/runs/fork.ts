import type { ApprovalMode, Budget } from "../engine";
import type { KeyGrammar } from "../engine/journal/keys";
import type { CatalogSnapshot } from "../pinned-catalog";
import type { Attributes } from "../engine/attributes";

/** Where a fork began: a run and the journal key before which its steps were copied. */
export interface ForkOrigin {
  run: string;
  at: string;
}

/** `POST /runs/:id/fork`, as the new run's object is asked to do it. */
export interface ForkRun {
  /** The new run's id. */
  id: string;
  /** The run forked. */
  source: string;
  at: string;
  /** `current`: the deploy's catalog from `at` on; `pinned`: the source's snapshot. */
  definitions: "current" | "pinned";
  /** The source's mode when absent. */
  approvalMode?: ApprovalMode;
}

/** `at` before every step: the fork runs the whole run again (POST /operations `fork`; the API's `at` is always a step). */
export const FORK_FROM_START = "";

/** What a fork copied from its source: journal rows, their bytes (key + value as stored), and the RPC batches they took. */
export interface ForkCopy {
  rows: number;
  bytes: number;
  batches: number;
}

/** What the source run tells its fork before the copy: the run to start again, and where `at` is. */
export interface ForkSource {
  worker: string;
  input: unknown;
  approvalMode: ApprovalMode;
  budget: Budget;
  /** The source's pinned definitions (null: it started before runs were pinned). */
  catalog: CatalogSnapshot | null;
  grammar: KeyGrammar;
  /** Who started the source, as its trigger names them (initiator.ts): the fork is theirs too, so they may not approve its calls either. */
  initiator: string | null;
  /** Its attributes as they stood at `at` (the start's, and those its code set before): the fork's to start with. */
  attributes: Attributes;
  /** The journal seq of `at` (0: at the root worker, before every step): the prefix is every step below it. */
  atSeq: number;
  /** The prefix's size, within the bounds (`FORK_LIMITS`). */
  rows: number;
  bytes: number;
}

/** One batch of a prefix's rows (value: the JSON text as stored), and the seq to ask after next (null: the last batch). */
export interface ForkRows {
  rows: Array<{ key: string; value: string; at: number; startedAt: number | null }>;
  next: number | null;
}

/**
 * How much a fork copies: at most `rows` rows and `bytes` bytes in all (checked before
 * anything is copied), in batches of at most `batchBytes` (plus one row, itself at most
 * a step's 1.5 MB) well below the 32 MiB of an RPC message.
 */
export const FORK_LIMITS = { rows: 10_000, bytes: 32 * 1024 * 1024, batchBytes: 4 * 1024 * 1024 } as const;

/** One step of a run's journal as `GET /runs/:id/journal` lists it: never its value. */
export interface JournalStepView {
  seq: number;
  key: string;
  /** What the key records (keys.ts parseKey): model, result, approval, notify, approval_rule, creation, budget_approval, step, tools, or an effect's name (ask, now, random). */
  kind: string;
  /** When it was recorded (ms since the epoch). */
  at: number;
  /** Its value's size as stored (UTF-8 bytes of its JSON). */
  bytes: number;
}

/** A fork's trigger: what started it, shown to approvers and kept by the index (`name`: the source run; `initiator`: who started the source). */
export const forkTrigger = (origin: ForkOrigin, initiator: string | null) => ({
  kind: "fork",
  name: origin.run,
  at: origin.at,
  ...(initiator === null ? {} : { initiator }),
});

/** The origin a run's trigger records, if it is a fork. */
export function forkedFrom(trigger: unknown): ForkOrigin | null {
  const t = (trigger ?? {}) as Record<string, unknown>;
  return t.kind === "fork" && typeof t.name === "string" && typeof t.at === "string" ? { run: t.name, at: t.at } : null;
}
