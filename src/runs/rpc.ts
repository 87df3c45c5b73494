import type { PendingApprovalItem, RunListItem, RunQuery, RunSummary, SweepAnswer, Tombstone } from "./index-types";
import type { ForkCopy, ForkRows, ForkRun, ForkSource, JournalStepView } from "./fork";
import { sha256Hex } from "../engine/ids";
import type { ChildEnd } from "../engine/types/children";
import { mergeApprovals, mergePages } from "./index-listing";
import { indexObjects, indexShardOf, LEGACY_INDEX } from "./index-shards";
import type {
  Answer,
  Decided,
  DecisionRequest,
  EmailReply,
  EventDelivery,
  EventOutcome,
  ModelDelta,
  ReplyRequest,
  RunEvent,
  RunStatusName,
  RunView,
  SentMessage,
  StartRun,
} from "./types";

/**
 * What the app asks of one run's Durable Object (durable-objects/run/run.ts implements it).
 * Results cross RPC as structured clones of these types.
 */
export interface RunRpc {
  /** Stores the run and arms its first activation. Idempotent: a second start returns the first. */
  start(req: StartRun): Promise<{ id: string; status: RunStatusName; created: boolean }>;
  status(): Promise<RunView | null>;
  /** Events after a cursor (an event's id, durable-objects/run/events.ts), oldest first; `done` once the run ended and all are sent. */
  eventsSince(cursor?: string, limit?: number): Promise<{ events: RunEvent[]; done: boolean } | null>;
  /** Model text streamed after cursor `seq` (memory only). */
  deltasSince(seq?: number): Promise<{ deltas: ModelDelta[]; next: number }>;
  decide(approvalId: string, d: DecisionRequest): Promise<Answer<Decided>>;
  /** A decision by emailed reply: `mac` names the approval (src/tokens/reply-reference.ts). */
  decideByReply(mac: string, reply: ReplyRequest): Promise<Answer<Decided>>;
  /** `reason`: why, kept on the run_cancelled event (a flow key's replace says which run replaced it). */
  /** `onlyFrom`: cancel only a run in one of these statuses (read in the cancel's transaction). */
  cancel(reason?: string, onlyFrom?: readonly RunStatusName[]): Promise<Answer<{ status: "cancelled" | "cancelling" }>>;
  /** A worker this run created, as `.worker` file text. */
  createdWorker(name: string): Promise<Answer<{ text: string }>>;
  /** The next message of the run's conversation (POST /runs/:id/messages): taken now by a run that succeeded, else waiting its turn; the same `id` again adds none. */
  sendMessage(text: string, id?: string): Promise<Answer<SentMessage>>;
  /** A flow key's delivery as the next message (`on_busy: message`): like sendMessage, but an ended run refuses it (410). */
  followUp(text: string, id: string): Promise<Answer<SentMessage>>;
  /** A reply to one of the run's answer mails: `mac` from the conversation reference of its Reply-To (src/tokens/conversation-id.ts). */
  continueByEmail(mac: string, reply: EmailReply): Promise<Answer<SentMessage>>;
  /** Re-arms the activation of a run that should be running. */
  resume(): Promise<Answer<{ status: RunStatusName }>>;
  /** The run's journal steps after `seq` (never their values), oldest first, at most `limit`; `next`: the cursor for more. */
  journalSteps(after: number, limit: number): Promise<{ steps: JournalStepView[]; next: number | null } | null>;
  /** Asked of the new run's object: copies the source's prefix before `at`, then starts (durable-objects/run/fork.ts). */
  fork(req: ForkRun): Promise<Answer<{ status: RunStatusName; created: boolean; copied: ForkCopy }>>;
  /** Asked of the source by its fork: the run to start again and where `at` lies, or why it cannot be forked there. */
  forkSource(at: string): Promise<Answer<{ source: ForkSource }>>;
  /** Asked of the source by its fork: the prefix's rows after `after`, one batch. */
  forkRows(atSeq: number, after: number): Promise<Answer<ForkRows>>;
  /** The run index's stuck-run sweep: a run queued or running with no alarm is woken, or failed `stuck` after its wake-ups; `indexed`: the summary version the index holds. */
  sweep(indexed: number): Promise<SweepAnswer>;
  /** An event for this run (checked by src/runs/events.ts): taken by a wait, else kept for the next (`buffer`) or left. */
  deliverEvent(ev: EventDelivery, buffer: boolean): Promise<Answer<EventOutcome>>;
  /** Asked of a parent by its child run's outbox: the child's end, recorded once under the spawn's key `key` (durable-objects/run/children.ts). */
  childEnded(key: string, child: string, end: ChildEnd): Promise<{ ok: true; recorded: boolean } | { ok: false; error: string }>;
}

/**
 * What the app asks of one correlation index object (durable-objects/wait-index.ts):
 * the runs waiting for one event under one correlation key.
 */
export interface WaitIndexRpc {
  /**
   * The run's wait listens for this (event, key) until `until` (idempotent). `since`: when
   * the wait was asked; the answer is the signals kept that came since (none without it).
   */
  register(runId: string, waitId: string, until: number, since?: number): Promise<EventDelivery[]>;
  /** The runs listening now (expired entries are dropped), at most `limit`; `signal`: the one they are listed for, kept a while. */
  waiting(now: number, limit: number, signal?: EventDelivery): Promise<string[]>;
  /** These runs no longer listen here (they ended, or none of their waits is for this event and key). */
  forget(runIds: string[]): Promise<void>;
}

/** What the app asks of the run index (durable-objects/run-index.ts implements it). */
export interface RunIndexRpc {
  /** Applies a run's summary if it is newer than what the index holds. */
  upsert(s: RunSummary): Promise<{ applied: boolean }>;
  /** Newest first, keyset-paged on (created_at, id). */
  listRuns(q: RunQuery): Promise<{ runs: RunListItem[]; next: { created_at: number; id: string } | null }>;
  /** Every pending approval across runs, oldest first. */
  pendingApprovals(): Promise<{ approvals: PendingApprovalItem[]; truncated: boolean }>;
  /** Retention deleted the run: it leaves the index, a tombstone says why it is gone. */
  retire(t: Tombstone): Promise<void>;
  tombstone(id: string): Promise<Tombstone | null>;
}

/** The Durable Object of one run, by run id. */
export const runStub = (env: Env, id: string) => env.RUNS.getByName(id) as unknown as RunRpc;

/** One object of the run index, by name (src/runs/index-shards.ts): a run's shard, or the legacy index. */
export const runIndexObject = (env: Env, name: string) => env.RUN_INDEX.getByName(name) as unknown as RunIndexRpc;

/** What the app reads from the run index (runs write to their own shard: durable-objects/run/index-sync.ts). */
export type RunIndexReader = Pick<RunIndexRpc, "listRuns" | "pendingApprovals" | "tombstone">;

/** The index read across its objects; `object` names one (`runIndexObject`). */
function shardedIndex(object: (name: string) => RunIndexRpc): RunIndexReader {
  const every = () => indexObjects().map(object);
  return {
    async listRuns(q: RunQuery) {
      return mergePages(await Promise.all(every().map((o) => o.listRuns(q))), q.limit);
    },
    async pendingApprovals() {
      return mergeApprovals(await Promise.all(every().map((o) => o.pendingApprovals())));
    },
    /** A deleted run's tombstone is in its shard, or in the legacy index for a run queued before sharding. */
    async tombstone(id: string): Promise<Tombstone | null> {
      return (await object(indexShardOf(id)).tombstone(id)) ?? (await object(LEGACY_INDEX).tombstone(id));
    },
  };
}

/** The run index as the app reads it: every shard asked, pages merged (docs/operate.md, "The run index"). */
export const runIndex = (env: Env): RunIndexReader => shardedIndex((name) => runIndexObject(env, name));

/**
 * The correlation index object of one (event, key): one object per pair, named by
 * their hash, so the index spreads over as many objects as there are keys waited on
 * (a signal reaches exactly one). Neither name nor key is trusted: only the hash names it.
 */
export const waitIndex = async (env: Env, event: string, key: string) =>
  env.WAIT_INDEX.getByName(await sha256Hex(`${event}\n${key}`)) as unknown as WaitIndexRpc;
