/**
 * FlowKeyDO: the object of one (trigger, key) of a flow-controlled trigger
 * (docs/triggers.md, "Flow control"): one per key, named by the hash of trigger and key
 * values (src/triggers/flow/key.ts), so no object sees another key's deliveries. Owns
 * its key's line, ledger, runs in progress and debounce batch (key-store.ts).
 *
 * A delivery is taken once by its id (the ledger answers a redelivery as the first). It
 * joins the key's line (or, debounced, its batch: the alarm moves the batch to the line
 * once the key has been quiet), and the line is worked through in order, one head at a
 * time (`pump`): the key decides for the head from its runs in progress and its rate
 * (decide.ts), writes the decision, then acts on it (act.ts) and records the outcome —
 * so an act cut off by an eviction is finished the same way by the alarm, and every act
 * is idempotent. A run the key started tells it when it ends (the run's outbox, at least
 * once: `runEnded`), which frees its slot and moves the line on. Nothing decides on state
 * read before an await: the decision is written before the act's await, and what the
 * act's answer changes is read again after it.
 */

import { DurableObject } from "cloudflare:workers";
import { scheduleTriggers, triggers } from "../../src/catalog";
import { sha256Hex } from "../../src/engine/ids";
import { runIdFor } from "../../src/triggers/delivery";
import { flowOf, MAX_LINE, type FlowConfig } from "../../src/triggers/flow/config";
import { decide, reachesRun, type Decision } from "../../src/triggers/flow/decide";
import { flowObjectName } from "../../src/triggers/flow/key";
import type { FlowAnswer, FlowOutcome } from "../../src/triggers/flow/outcome";
import { rateCheck } from "../../src/triggers/flow/rate";
import type { FlowDelivery, FlowKeyRpc } from "../../src/triggers/flow/rpc";
import { parse, Sql } from "../sql";
import { eventTo, messageTo, startFor, type Acted, type FlowTrigger } from "./act";
import { debounceRefusal, refusal } from "./admission";
import { KeyBatch } from "./debounce";
import { KeyStore, LEDGER_MS, type Item, type LineRow } from "./key-store";

/** An act that failed (a run's object unreachable) is tried again this much later, doubling, at most RETRY_MAX_MS. */
const RETRY_MS = 5_000;
const RETRY_MAX_MS = 300_000;
/** Before an act the alarm is armed at most this far ahead: an act an eviction cut off is finished then. */
const SAFETY_MS = 60_000;

export class FlowKeyDO extends DurableObject<Env> implements FlowKeyRpc {
  protected readonly sql: Sql;
  private readonly store: KeyStore;
  private readonly batch: KeyBatch;
  /** The line's worker in progress: one at a time, so the heads are acted on in order. */
  private pumping: Promise<void> | undefined;
  /** Set while the head waits for the rate: when it may go. */
  private rateWait: number | undefined;
  /** Set after an act failed: when to try again, and how many failed in a row. */
  private retry: { at: number; failures: number } | undefined;
  /** What the alarm is set to, as this instance knows (undefined: read storage). */
  private armed: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    this.store = new KeyStore(this.sql, ctx.storage.kv);
    this.store.make();
    this.batch = new KeyBatch(this.store, (fn) => ctx.storage.transactionSync(fn));
  }

  async deliver(d: FlowDelivery): Promise<FlowAnswer> {
    const t = this.triggerOf(d.trigger);
    const flow = t && flowOf(t);
    if (!t || !flow) return { failed: true, error: `trigger "${d.trigger}" has no flow control in this deploy` };
    const [run, eventId, name] = await Promise.all([runIdFor(d.trigger, d.id), eventIdOf(d.id), flowObjectName(d.trigger, d.key)]);
    // From here on nothing awaits until the delivery is recorded.
    this.store.remember({ trigger: d.trigger, key: d.key, name });
    const known = this.answerFor(d.id);
    if (known) return this.again(d.id, known);
    const item: Item = { id: d.id, run, eventId, input: d.input, record: d.record, ...(d.attributes ? { attributes: d.attributes } : {}) };
    const bytes = new TextEncoder().encode(JSON.stringify(item)).length;
    if (flow.debounce) {
      const refused = debounceRefusal(this.store, bytes);
      if (refused) return refused;
      this.batch.add(flow, item, bytes, this.now());
    } else {
      const refused = refusal(this.store, flow, bytes, this.now());
      if (refused) return refused;
      this.store.enqueue(item, bytes);
    }
    await this.pump();
    await this.rearm(flow);
    return this.answerFor(d.id)!;
  }

  async runEnded(runId: string): Promise<void> {
    this.store.removeSlot(runId);
    await this.pump();
    const t = this.keyTrigger();
    await this.rearm(t && flowOf(t));
  }

  override async alarm(): Promise<void> {
    this.armed = null;
    const t = this.keyTrigger();
    const flow = t && flowOf(t);
    const now = this.now();
    if (flow && this.batch.due(flow) <= now) this.batch.flush(flow);
    if (this.retry && this.retry.at <= now) this.retry = { ...this.retry, at: 0 };
    await this.pump();
    await this.rearm(flow, true);
  }

  // ——— Seams a subclass may override (the test pool's TestFlowKeyDO: tests/support/test-flow-key.ts) ———

  /** The key's clock: debounce, rate and retries are measured by it. */
  protected now(): number {
    return Date.now();
  }

  /** Before each act, its decision written (the test pool injects an eviction or a failure here). */
  protected async acting(_d: Decision): Promise<void> {}

  /** Writes the alarm, for the time `at` of the key's clock. */
  protected async setAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
  }

  // ——— Taking a delivery ———

  /** A redelivery: the same answer as the first (once the line has moved on, if it waits there). */
  private async again(id: string, known: FlowAnswer): Promise<FlowAnswer> {
    if ("queued" in known) await this.pump();
    return { ...(this.answerFor(id) ?? known), duplicate: true } as FlowAnswer;
  }

  /** What a delivery came to so far: its outcome, its place in the line, or its batch. */
  private answerFor(id: string): FlowAnswer | undefined {
    const outcome = this.store.outcome(id);
    if (outcome) return outcome;
    const at = this.store.lineIds().indexOf(id);
    if (at >= 0) return { queued: true, position: at + 1 };
    if (this.store.inBatch(id)) {
      const t = this.keyTrigger();
      const flow = t && flowOf(t);
      return { debounced: true, until: flow ? this.batch.due(flow) : this.now() };
    }
    return undefined;
  }

  // ——— Working through the line ———

  /** Works through the line in order until it is empty or its head must wait; one at a time. */
  private pump(): Promise<void> {
    this.pumping ??= this.drain().finally(() => (this.pumping = undefined));
    return this.pumping;
  }

  private async drain(): Promise<void> {
    const t = this.keyTrigger();
    const flow = t && flowOf(t);
    if (!t || !flow) return;
    this.rateWait = undefined;
    // Each pass takes the head off the line or stops: at most the line's length, plus a start after an ended run's refusal each.
    for (let pass = 0; pass < 2 * MAX_LINE + 2; pass++) {
      if (this.retry && this.retry.at > this.now()) return;
      const head = this.store.head();
      if (!head) return;
      const d = head.decided ? parse(head.decided) : this.decideHead(flow, head);
      if (d.act === "wait") {
        this.rateWait = d.until;
        return;
      }
      const item = parse(head.item);
      // Whatever cuts the act off (an eviction), the alarm finishes it.
      await this.armBy(this.now() + SAFETY_MS);
      let acted: Acted;
      try {
        await this.acting(d);
        acted = await this.act(t, d, item);
      } catch (err) {
        const failures = (this.retry?.failures ?? 0) + 1;
        this.retry = { at: this.now() + Math.min(RETRY_MS * 2 ** (failures - 1), RETRY_MAX_MS), failures };
        console.warn(`flow key of trigger ${t.name}: acting on a delivery failed (${failures} in a row): ${(err as Error).message}`);
        return;
      }
      this.retry = undefined;
      // Read after the await: the key's runs may have changed while it acted.
      this.ctx.storage.transactionSync(() => {
        if (acted === "ended") return this.restart(head, d);
        this.store.finish(head, acted, this.now());
        if ("failed" in acted && d.act === "start") this.store.removeSlot(item.run);
      });
    }
  }

  /** The key's decision for the head, written with what it changes (its run's slot, the rate) before it is acted on. */
  private decideHead(flow: FlowConfig, head: LineRow): Decision {
    return this.ctx.storage.transactionSync(() => {
      const rate = flow.rate && rateCheck(flow.rate, this.store.tat(), this.now());
      const d = decide(flow, this.store.active(), rate);
      if (d.act === "wait") return d;
      if (rate?.ok && reachesRun(d)) this.store.setTat(rate.tat);
      if (d.act === "start") {
        if (d.cancel) this.store.removeSlot(d.cancel);
        this.store.addSlot(parse(head.item).run);
      }
      this.store.setDecided(head.seq, d);
      return d;
    });
  }

  /** The run a message or an event was for had ended: its slot frees, and the delivery starts a run of its own. */
  private restart(head: LineRow, d: Decision): void {
    if (d.act === "message" || d.act === "event") this.store.removeSlot(d.run);
    const start: Decision = { act: "start" };
    this.store.addSlot(parse(head.item).run);
    this.store.setDecided(head.seq, start);
  }

  private act(t: FlowTrigger, d: Exclude<Decision, { act: "wait" }>, item: Item): Promise<Acted> {
    const meta = this.store.meta()!;
    switch (d.act) {
      case "skip":
        return Promise.resolve({ skipped: true, run_id: d.run } satisfies FlowOutcome);
      case "start":
        return startFor(this.env, t, meta, item, d.cancel);
      case "message":
        return messageTo(this.env, d.run, item);
      case "event":
        return eventTo(this.env, d.run, d.name, item);
    }
  }

  // ——— The alarm ———

  /**
   * The next alarm, never later than one armed: the batch's start, the head's rate, a retry,
   * the safety net of a head in progress, the ledger's pruning. The alarm itself prunes (the
   * ledger's oldest outcome sets the next); elsewhere an outcome just kept is pruned a
   * LEDGER_MS from now at the latest. Nothing left after an alarm: the object forgets itself.
   */
  private async rearm(flow: FlowConfig | undefined, inAlarm = false): Promise<void> {
    const now = this.now();
    const head = this.store.head();
    const times = [
      flow ? this.batch.due(flow) : Infinity,
      this.rateWait ?? Infinity,
      this.retry?.at ?? Infinity,
      head?.decided ? now + SAFETY_MS : Infinity,
      inAlarm ? (this.store.prune(now) ?? Infinity) : now + LEDGER_MS,
    ];
    const next = Math.min(...times);
    if (next === Infinity) {
      if (inAlarm && this.store.empty()) await this.forget();
      return;
    }
    await this.armBy(next);
  }

  /** The alarm comes no later than `at`. */
  private async armBy(at: number): Promise<void> {
    if (this.armed === undefined) this.armed = await this.ctx.storage.getAlarm();
    if (this.armed !== null && this.armed <= at) return;
    await this.setAlarm(at);
    this.armed = at;
  }

  /** Nothing waits and nothing is remembered: every row goes. */
  private async forget(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.armed = null;
    this.store.make();
  }

  // ——— The trigger ———

  private keyTrigger(): FlowTrigger | undefined {
    const meta = this.store.meta();
    return meta ? this.triggerOf(meta.trigger) : undefined;
  }

  /** A webhook that starts runs, or a schedule (whose key is the trigger itself). */
  private triggerOf(name: string): FlowTrigger | undefined {
    const t = triggers().get(name);
    return t && "worker" in t ? t : scheduleTriggers().get(name);
  }
}

/** A delivery id as an event or message id (1-200 of A-Z a-z 0-9 _ . : -): hashed, whatever the sender's id holds. */
const eventIdOf = async (id: string) => `flow_${(await sha256Hex(id)).slice(0, 40)}`;
