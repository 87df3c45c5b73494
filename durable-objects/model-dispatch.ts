/**
 * MODEL_DISPATCH=queue for one run: hands model requests to the queue and takes the
 * consumer's answers back. Owns the `model_dispatch` table (schema.ts, made on first
 * use). Needs from its host (run/host.ts): `ctx` (the object's id, for the consumer
 * to reach it), `env` (MODEL_QUEUE), the SQL, `wakeSoon` (an answer arrived) and `io`.
 */

import * as z from "zod";
import { RunError, RunInterrupted, type Model, type ModelRequest, type ModelResolver, type ModelResponse } from "../src/engine";
import { MAX_STEP_BYTES, stepBytes } from "../src/engine/journal/bounds";
import { answerTooLarge } from "../src/engine/run/model-step";
import type { ModelsConfig } from "../src/engine/model/providers";
import { numberVar } from "../src/config";
import type { RunHost } from "./run/host";
import type { ModelDispatchRow } from "./rows";
import { madeOnFirstUse, makeOnFirstUse } from "./schema";
import { json, parse, type Sql } from "./sql";
import type { ContentPart, Message } from "../src/engine/types/model";
import { ConnectionSlots, type Connection, type Connections } from "../src/engine/net/connection-slots";

/**
 * How long a claim holds without renewal before the run's alarm sends the request
 * again (its consumer is taken for dead). The consumer renews it RENEWALS_PER_LEASE
 * times per lease while the model thinks, so three renewals in a row must fail first.
 */
export const LEASE_MS = 60_000;
export const RENEWALS_PER_LEASE = 4;
/**
 * How long a hand-off may wait unclaimed before the run asks the model itself, as
 * in direct mode. Bounds the wait behind a busy consumer (one working a batch of
 * slow requests takes no new batch), a lost message or a missing consumer.
 */
export const CLAIM_TIMEOUT_MS = 10_000;
/** The timing in force: one object, so tests can shorten it (the consumer renews at the lease its claim names). */
export const dispatchTiming = { leaseMs: LEASE_MS, claimTimeoutMs: CLAIM_TIMEOUT_MS };
/** Hand-offs of one request before the run fails with model_error instead of sending it again. */
export const MAX_ATTEMPTS = 5;
/** Default time the consumer waits for a model's answer before it delivers a failure. */
export const DEFAULT_DISPATCH_TIMEOUT_MS = 10 * 60_000;
export const dispatchTimeoutMs = (env: Env) => numberVar(env, "MODEL_DISPATCH_TIMEOUT_MS", DEFAULT_DISPATCH_TIMEOUT_MS);

/**
 * The queue message: which run, which request, which attempt. Never the request
 * itself (a message is at most 128 KB; a conversation can be megabytes): the
 * consumer claims it from the run's object.
 */
export const dispatchMessage = z.strictObject({
  run: z.string().regex(/^[0-9a-f]{64}$/),
  key: z.string().min(1).max(4096),
  attempt: z.number().int().min(1).max(1_000_000),
});
export type DispatchMessage = z.infer<typeof dispatchMessage>;

/** What a consumer delivers: the model's response, or its (redacted) failure. Unknown fields are dropped. */
export const deliveredAnswer = z.discriminatedUnion("ok", [
  z.object({
    ok: z.literal(true),
    response: z.object({
      text: z.string().nullable(),
      toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
      // As lenient as direct mode, which records what the provider reported.
      usage: z.object({ inputTokens: z.number().finite().nonnegative(), outputTokens: z.number().finite().nonnegative() }),
      streamRefused: z.literal(true).optional(),
    }),
  }),
  z.object({ ok: z.literal(false), message: z.string().transform((m) => m.slice(0, 4096)) }),
]);
export type DeliveredAnswer = z.infer<typeof deliveredAnswer>;

/** A consumer's answer as the run records it: one of a shape it cannot record is the model's failure (acked and dropped, it would be asked again and again). */
export function recordableAnswer(answer: unknown): DeliveredAnswer {
  const parsed = deliveredAnswer.safeParse(answer);
  if (parsed.success) return parsed.data;
  const { issues } = parsed.error;
  return { ok: false, message: `its answer could not be recorded: ${issues.length} problem(s), first at ${issues[0]?.path.join(".") || "(root)"}` };
}

/** As stored: a too-large answer is kept as its size only, and fails the step as in direct mode. */
type StoredAnswer = DeliveredAnswer | { ok: false; tooLarge: true; message: string };

/** An attachment with its bytes read, so the request crosses RPC as plain data. */
type WireAttachment = { type: "attachment"; name: string; mime: string; size: number; data: Uint8Array };
type WireMessage =
  | Exclude<Message, { role: "user" }>
  | { role: "user"; content: string | Array<Exclude<ContentPart, { type: "attachment" }> | WireAttachment> };
export type WireRequest = Omit<ModelRequest, "messages" | "onDelta" | "key"> & { messages: WireMessage[] };

/** What `claimModelRequest` hands a consumer: the model as the run names it, the request, the run's pinned models.yaml, the lease to renew. */
export interface ClaimedRequest {
  model: string;
  leaseMs: number;
  request: WireRequest;
  models: ModelsConfig;
}

type Lapsing = Pick<ModelDispatchRow, "attempt" | "sent_at" | "claimed" | "lease_until">;
const isClaimed = (row: Pick<ModelDispatchRow, "attempt" | "claimed">) => row.claimed === row.attempt;
/** When an unanswered hand-off lapses: its lease once claimed, else the claim timeout after it was sent. */
const lapsesAt = (row: Lapsing) => (isClaimed(row) ? (row.lease_until ?? 0) : row.sent_at + dispatchTiming.claimTimeoutMs);

/** The one seam for sending (tests spy on it to drop, duplicate or hold messages). */
export const modelQueue = {
  async send(queue: Queue, message: DispatchMessage): Promise<void> {
    await queue.send(message, { contentType: "json" });
  },
};

interface Waiting {
  model: string;
  attempt: number;
  request: ModelRequest;
  models: ModelsConfig;
}

/**
 * MODEL_DISPATCH=queue for one run's object: its models hand each request to the
 * queue and end the activation (`RunInterrupted("dispatched")`), so the object is
 * idle while the model thinks; a stateless consumer claims the request, asks the
 * model and delivers the answer here; the next replay's request returns it and the
 * engine records it as the journal step, exactly as in direct mode.
 */
export class ModelDispatch {
  /** Requests handed off and not yet claimed: memory only (an evicted object's are rebuilt by replay or sent again). */
  private readonly waiting = new Map<string, Waiting>();
  private tableMade = false;
  /** When each answer returned in this activation was handed off: its step began then, not at the replay that records it. */
  private readonly handedOff = new Map<string, number>();

  constructor(private readonly host: Pick<RunHost, "ctx" | "env" | "sql" | "wakeSoon" | "io">) {}

  private get sql(): Sql {
    return this.host.sql;
  }

  /**
   * The run's models in queue mode: each resolved as direct mode would (same errors), then handed off.
   * `connections`: the activation's (a queue send is one of the connections the platform counts).
   */
  models(direct: ModelResolver, pinned: ModelsConfig, connections: Connections = new ConnectionSlots()): ModelResolver {
    return (name) => {
      direct(name);
      // Without it every hand-off would fail to send and be sent again a minute later, forever.
      if (!this.host.env.MODEL_QUEUE) {
        throw new RunError(
          "config",
          "MODEL_DISPATCH=queue needs the MODEL_QUEUE queue binding ([[queues.producers]] in wrangler.toml, after `wrangler queues create edgework-model-requests`), or set MODEL_DISPATCH=direct",
          true,
        );
      }
      return { request: (req) => this.request(name, req, pinned, direct, connections), requested: (key) => this.requested(key) } satisfies Model;
    };
  }

  /**
   * The SQL, with the table made on first use: only objects that hand a request
   * off pay for creating it (a direct-mode run writes no rows for it).
   */
  private table(): Sql {
    if (!this.tableMade) makeOnFirstUse(this.sql, "model_dispatch");
    this.tableMade = true;
    return this.sql;
  }

  /**
   * After an activation that handed requests off: the deadline to arm, when the earliest
   * unclaimed hand-off or unrenewed claim lapses (an answer delivered meanwhile asked for
   * its own wake-up, which the lifecycle keeps).
   */
  rearmAt(): number {
    return this.earliestLapse() ?? Date.now() + dispatchTiming.leaseMs;
  }

  /**
   * When the earliest hand-off the journal still waits for lapses, or null when none
   * waits. Only those (a row left from a mode switch must not arm the past); read
   * also when the object starts, so a lost alarm cannot leave a dead claim unnoticed.
   */
  earliestLapse(): number | null {
    if (!madeOnFirstUse(this.sql, "model_dispatch")) return null;
    const lapses = this.table().all<Lapsing>`SELECT attempt, sent_at, claimed, lease_until FROM model_dispatch
      WHERE answer IS NULL AND key NOT IN (SELECT key FROM journal)`.map(lapsesAt);
    return lapses.length ? Math.min(...lapses) : null;
  }

  /** Forgets requests waiting in memory (the run ended). */
  forget(): void {
    this.waiting.clear();
  }

  /** When the request recorded under `key` was handed off (its last attempt), if its answer came from the queue: for the step's start (the timeline). */
  handedOffAt(key: string): number | undefined {
    const at = this.handedOff.get(key);
    this.handedOff.delete(key);
    return at;
  }

  private journaled(key: string): boolean {
    return this.sql.one`SELECT 1 AS recorded FROM journal WHERE key = ${key}` !== undefined;
  }

  private requested(key: string): boolean {
    return this.table().one`SELECT 1 AS sent FROM model_dispatch WHERE key = ${key}` !== undefined;
  }

  private async request(model: string, req: ModelRequest, models: ModelsConfig, direct: ModelResolver, connections: Connections): Promise<ModelResponse> {
    const key = req.key;
    if (!key) throw new Error("a model request handed to the queue needs its journal key");
    const row = this.table().one<
      Lapsing & Pick<ModelDispatchRow, "answer">
    >`SELECT attempt, sent_at, claimed, lease_until, answer FROM model_dispatch WHERE key = ${key}`;
    if (row?.answer != null) {
      if (row.sent_at > 0) this.handedOff.set(key, row.sent_at);
      const answer = parse<StoredAnswer>(row.answer);
      if (answer.ok) return answer.response;
      if ("tooLarge" in answer) throw new RunError("too_large", answer.message, true);
      throw new Error(answer.message);
    }
    const now = Date.now();
    if (row && lapsesAt(row) > now) {
      // In flight: if no consumer took it yet, a late message (or one after an eviction) can still claim it.
      if (!isClaimed(row)) this.waiting.set(key, { model, attempt: row.attempt, request: req, models });
      throw new RunInterrupted("dispatched", key);
    }
    // Read here, in the run's activation: an attached file that changed fails the run at once
    // (fatal), instead of failing every consumer's claim until the hand-offs run out.
    await this.host.io("model.attachments", () => readAttachments(req));
    const attempt = (row?.attempt ?? 0) + 1;
    // Each attempt was lost or its consumer died: something is wrong that sending again will not fix.
    if (attempt > MAX_ATTEMPTS)
      throw new RunError(
        "model_error",
        `model ${model}: no answer came back for ${MAX_ATTEMPTS} hand-offs of ${key} to the queue (MODEL_DISPATCH=queue); is its consumer deployed?`,
        true,
      );
    if (row && !isClaimed(row)) return this.askDirectly(key, attempt, direct(model), req);
    this.table().run`INSERT INTO model_dispatch (key, model, attempt, sent_at) VALUES (${key}, ${model}, ${attempt}, ${now})
      ON CONFLICT (key) DO UPDATE SET model = excluded.model, attempt = excluded.attempt, sent_at = excluded.sent_at`;
    this.waiting.set(key, { model, attempt, request: req, models });
    let connection: Connection | undefined;
    try {
      await this.host.io("model.hand-off", async () => {
        connection = await connections.acquire();
        await modelQueue.send(this.host.env.MODEL_QUEUE, { run: this.host.ctx.id.toString(), key, attempt });
      });
    } catch (err) {
      // The row stays: the timeout alarm sends it again (also after no connection came free).
      console.warn(JSON.stringify({ edgework: "model_dispatch_send_failed", key, attempt, error: err instanceof Error ? err.message : String(err) }));
    } finally {
      connection?.release();
    }
    throw new RunInterrupted("dispatched", key);
  }

  /**
   * Nobody claimed the hand-off within the claim timeout (the consumer is busy, the
   * message lost, or the object forgot the request): this activation asks the model,
   * under a new attempt it holds, so the old message can no longer claim it. Should the
   * activation die meanwhile, that claim's lease lapses and the request is sent again.
   */
  private async askDirectly(key: string, attempt: number, model: Model, req: ModelRequest): Promise<ModelResponse> {
    const now = Date.now();
    this.table()
      .run`UPDATE model_dispatch SET attempt = ${attempt}, sent_at = ${now}, claimed = ${attempt}, lease_until = ${now + dispatchTiming.leaseMs} WHERE key = ${key}`;
    this.waiting.delete(key);
    console.warn(JSON.stringify({ edgework: "model_dispatch_unclaimed", key, attempt, claim_timeout_ms: dispatchTiming.claimTimeoutMs }));
    return model.request(req);
  }

  /**
   * Hands a waiting request to the consumer, once, with a lease: null for an unknown,
   * answered, stale or already claimed attempt. One this object no longer holds (it
   * was evicted after sending), or a claim whose consumer stopped renewing (the queue
   * delivers the message again), is sent again at once.
   */
  async claim(key: string, attempt: number): Promise<ClaimedRequest | null> {
    const now = Date.now();
    const row = this.table().one<
      Pick<ModelDispatchRow, "attempt" | "claimed" | "lease_until" | "answer">
    >`SELECT attempt, claimed, lease_until, answer FROM model_dispatch WHERE key = ${key}`;
    if (!row || row.answer !== null || row.attempt !== attempt || this.journaled(key)) return null;
    if (row.claimed === attempt && (row.lease_until ?? 0) > now) return null;
    const waiting = this.waiting.get(key);
    if (row.claimed === attempt || !waiting || waiting.attempt !== attempt) {
      this.table().run`UPDATE model_dispatch SET sent_at = 0, lease_until = 0 WHERE key = ${key}`;
      await this.host.wakeSoon();
      return null;
    }
    this.waiting.delete(key);
    const leaseMs = dispatchTiming.leaseMs;
    this.table().run`UPDATE model_dispatch SET claimed = ${attempt}, lease_until = ${now + leaseMs} WHERE key = ${key}`;
    return { model: waiting.model, leaseMs, request: await this.host.io("claim.wire", () => wire(waiting.request)), models: waiting.models };
  }

  /** The consumer holding `attempt` is alive: its lease runs on. False: the request is no longer wanted (answered, sent again, run ended). */
  renew(key: string, attempt: number): boolean {
    const row = this.table().one<
      Pick<ModelDispatchRow, "attempt" | "claimed" | "answer">
    >`SELECT attempt, claimed, answer FROM model_dispatch WHERE key = ${key}`;
    if (!row || row.answer !== null || row.attempt !== attempt || row.claimed !== attempt) return false;
    this.table().run`UPDATE model_dispatch SET lease_until = ${Date.now() + dispatchTiming.leaseMs} WHERE key = ${key}`;
    return true;
  }

  /**
   * Records a delivered answer once: only for a request handed off and unanswered
   * whose key is not in the journal. An answer over the journal's step bound is kept
   * as its size (the step fails as in direct mode). False: nothing changed.
   */
  async deliver(key: string, attempt: number, answer: DeliveredAnswer): Promise<boolean> {
    const row = this.table().one<Pick<ModelDispatchRow, "model" | "claimed" | "answer">>`SELECT model, claimed, answer FROM model_dispatch WHERE key = ${key}`;
    // Only an attempt a consumer claimed (a late answer of an earlier one is as good).
    if (!row || row.answer !== null || attempt > (row.claimed ?? 0)) return false;
    if (this.journaled(key)) return false;
    let stored: StoredAnswer = answer;
    if (answer.ok) {
      const bytes = stepBytes(key, { ...answer.response, model: row.model, costUsd: 0 });
      if (bytes > MAX_STEP_BYTES) {
        stored = { ok: false, tooLarge: true, message: answerTooLarge(row.model, bytes) };
      }
    }
    this.table().run`UPDATE model_dispatch SET answer = ${json(stored)} WHERE key = ${key}`;
    this.waiting.delete(key);
    await this.host.wakeSoon();
    return true;
  }
}

/** Reads every attachment of the request (each checks its recorded sha256; `claim` reuses the bytes read). */
async function readAttachments(req: ModelRequest): Promise<void> {
  for (const m of req.messages) {
    if (m.role === "user" && typeof m.content !== "string") for (const p of m.content) if (p.type === "attachment") await p.bytes();
  }
}

/** The request as plain data: attachments read into bytes, no callbacks. */
async function wire(req: ModelRequest): Promise<WireRequest> {
  const messages = await Promise.all(
    req.messages.map(async (m): Promise<WireMessage> => {
      if (m.role !== "user") return m;
      if (typeof m.content === "string") return { role: "user", content: m.content };
      const content = await Promise.all(
        m.content.map(async (p) => (p.type === "attachment" ? { type: p.type, name: p.name, mime: p.mime, size: p.size, data: await p.bytes() } : p)),
      );
      return { role: "user", content };
    }),
  );
  return { messages, tools: req.tools, ...(req.output ? { output: req.output } : {}) };
}

/** The inverse of `wire`, on the consumer's side. */
export function unwire(req: WireRequest): ModelRequest {
  const messages = req.messages.map((m): Message => {
    if (m.role !== "user") return m;
    if (typeof m.content === "string") return { role: "user", content: m.content };
    return {
      role: "user",
      content: m.content.map((p) => (p.type === "attachment" ? { type: p.type, name: p.name, mime: p.mime, size: p.size, bytes: async () => p.data } : p)),
    };
  });
  return { ...req, messages };
}

/**
 * A running run that waits for a handed-off answer has an alarm, at the latest when
 * the hand-off lapses: checked as the run's object starts, so a restart that lost the
 * alarm (local dev keeps none) cannot leave a dead consumer's claim unnoticed.
 */
export async function armDispatchLapse(host: Pick<RunHost, "row" | "arm">, armedAt: () => Promise<number | null>, dispatch: ModelDispatch): Promise<void> {
  if (host.row()?.status !== "running" || (await armedAt()) !== null) return;
  const at = dispatch.earliestLapse();
  if (at !== null) await host.arm(at);
}
