import type { Journal } from "../../src/engine/journal/journal";
import type { RunSummary } from "../../src/runs/index-types";
import type { RunIndexRpc, RunRpc } from "../../src/runs/rpc";
import type { CountRow } from "../../durable-objects/rows";
import { RunIndexDO } from "../../durable-objects/run-index";
import { LEGACY_INDEX } from "../../src/runs/index-shards";
import { countingEnv, type Counts } from "./outbound-count";
import { RunDO } from "../../durable-objects/run/run";
import type { OtelVars } from "../../src/otel/exporter";
import type { IoPoint } from "../../durable-objects/run/io";
import { FaultInjector, type TestHooks } from "./faults";
import { IoHold } from "./io-hold";

/** How far ahead a test run's wake-ups are armed (see `soon`). */
export const SOON_MS = 60_000;

/**
 * The run's object as the Workers pool runs it (tests/support/test-worker.ts exports it
 * as RunDO): the production class plus what tests and benchmarks inspect and inject.
 */
export class TestRunDO extends RunDO {
  constructor(ctx: DurableObjectState, env: Env) {
    const counts: Counts = new Map();
    super(ctx, countingEnv(env, counts));
    this.outbound = counts;
  }

  /** This instance's requests to other objects, by binding and object name (tests/support/outbound-count.ts). */
  private readonly outbound: Counts;

  private readonly faults = new FaultInjector(this.ctx);
  private readonly held = new IoHold();
  private alarmsSet = 0;
  private abortAfter: { point: IoPoint; nth: number } | undefined;
  /** How far this run's clock is ahead of the real one (kept in the object's KV: it outlives an eviction). */
  private clockAhead = this.ctx.storage.kv.get<number>("test_clock_ahead") ?? 0;

  /** Moves the run's clock forward (waits' deadlines come sooner): the fake clock of the wait tests. */
  async advanceClock(ms: number): Promise<void> {
    this.clockAhead += ms;
    this.ctx.storage.kv.put("test_clock_ahead", this.clockAhead);
  }

  protected override now(): number {
    return Date.now() + this.clockAhead;
  }

  async setTestHooks(hooks: TestHooks): Promise<void> {
    this.faults.arm(hooks);
  }

  /** Points this run's traces somewhere (kept in storage: an evicted object keeps exporting there). */
  async setOtelVars(vars: OtelVars): Promise<void> {
    this.ctx.storage.kv.put(OTEL_VARS, vars);
  }

  /** `resume`, as a yes/no. */
  async wake(): Promise<boolean> {
    return (await this.resume()).ok;
  }

  /** Rows read and written, and alarms set, by this object since it was constructed (cost accounting). */
  async storageStats(): Promise<{ rowsRead: number; rowsWritten: number; alarmsSet: number }> {
    return { rowsRead: this.sql.rowsRead, rowsWritten: this.sql.rowsWritten, alarmsSet: this.alarmsSet };
  }

  /** A new activation: a fault that fired belonged to the last one. */
  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    this.faults.reset();
    return super.alarm(info);
  }

  protected override otelVars(): OtelVars {
    return this.ctx.storage.kv.get<OtelVars>(OTEL_VARS) ?? super.otelVars();
  }

  protected override activationBudgetMs(): number {
    return this.faults.activationBudgetMs ?? super.activationBudgetMs();
  }

  /**
   * Runs in the test pool report to the legacy index ("index") unless a test asks for the shards
   * (`useShardedIndex`, before `start`): the index's own tests inspect that one object, as a
   * deployment does for runs queued before the index was sharded.
   */
  protected override indexHome(runId: string): string {
    return this.ctx.storage.kv.get<boolean>(SHARDED) ? super.indexHome(runId) : LEGACY_INDEX;
  }

  /** Requests this instance sent to other objects since it was constructed: `{ "<BINDING> <name>": n }`. */
  async outboundRequests(): Promise<Record<string, number>> {
    return Object.fromEntries(this.outbound);
  }

  /** This run, once started, reports to its shard of the run index, as in production. */
  async useShardedIndex(): Promise<void> {
    this.ctx.storage.kv.put(SHARDED, true);
  }

  /** A report the index refused waits long enough for a test to see it pending. */
  protected override indexRetryMs(): number {
    return 600_000;
  }

  protected override async stepStarting(key: string, journal: Journal): Promise<void> {
    await this.killIfAsked();
    await this.faults.check(journal.size, () => journal.othersSettled(key));
  }

  /**
   * Kills the next `n` activations at their first step, as the platform ends an alarm past its
   * CPU, memory or wall-time limit: the object is reset there, so nothing our code catches or
   * runs in a `finally` can write (storage refuses it), and the activation has no outcome. Kept in
   * KV: a kill outlives the instance it ends. `runDurableObjectAlarm` then deletes the alarm, as
   * the runtime drops one after its retries (docs/operate.md, "Local dev as strict as production").
   */
  async killActivations(n: number): Promise<void> {
    this.ctx.storage.kv.put(KILLS, n);
  }

  private async killIfAsked(): Promise<void> {
    const left = this.ctx.storage.kv.get<number>(KILLS) ?? 0;
    if (left <= 0) return;
    this.ctx.storage.kv.put(KILLS, left - 1);
    await this.ctx.storage.sync(); // what came before the kill is durable, as the platform's output gate would have it
    this.ctx.abort("activation killed by the test pool, as the platform ends one past its CPU, memory or wall-time limit");
  }

  /** A fault between the last step and saving the outcome (e.g. right after an approval email). */
  protected override async outcomeReached(): Promise<void> {
    if (this.faults.armed) await this.faults.check(this.sql.one<CountRow>`SELECT count(*) AS n FROM journal`!.n);
  }

  /** A minute ahead: tests drive activations with runDurableObjectAlarm, which the real scheduler would race. */
  protected override soon(): number {
    return Date.now() + SOON_MS;
  }

  /** Holds the object at the `nth` pass through `point` (io.ts) until `release`: `heldAt` answers once it is there. */
  async holdAt(point: IoPoint, opts: { nth?: number; when?: "before" | "after" } = {}): Promise<void> {
    this.held.arm(point, opts.nth ?? 1, opts.when ?? "before");
  }

  /** Once the object is held (true), or false if `ms` passed first. */
  async heldAt(ms = 5_000): Promise<boolean> {
    return this.held.reached(ms);
  }

  async release(): Promise<void> {
    this.held.release();
  }

  /** Each io point the object passed since `tracePoints` started, in order. */
  async tracePoints(): Promise<IoPoint[]> {
    return this.held.trace();
  }

  protected override async io<T>(point: IoPoint, fn: () => Promise<T>): Promise<T> {
    const result = await this.held.pass(point, fn);
    if (this.abortAfter?.point === point && --this.abortAfter.nth === 0) {
      this.abortAfter = undefined;
      await this.ctx.storage.sync();
      this.ctx.abort(`evicted by the test pool after ${point}`);
    }
    return result;
  }

  /** Evicts the object right after its `nth` pass through `point` has its answer (before anything is recorded of it). */
  async abortAfterIo(point: IoPoint, nth = 1): Promise<void> {
    this.abortAfter = { point, nth };
  }

  /** Evicts the object after it recorded the next child's end, before it answers: the child must tell it again. */
  async abortAfterChildEnded(): Promise<void> {
    this.ctx.storage.kv.put(ABORT_CHILD_ENDED, true);
  }

  override async childEnded(...args: Parameters<RunDO["childEnded"]>): ReturnType<RunDO["childEnded"]> {
    const answer = await super.childEnded(...args);
    if (this.ctx.storage.kv.get<boolean>(ABORT_CHILD_ENDED)) {
      this.ctx.storage.kv.delete(ABORT_CHILD_ENDED);
      await this.ctx.storage.sync();
      this.ctx.abort("evicted by the test pool after recording a child's end");
    }
    return answer;
  }

  protected override async setAlarm(at: number): Promise<void> {
    this.alarmsSet++;
    await super.setAlarm(at);
  }
}

const OTEL_VARS = "test:otel-vars";
/** Set by `abortAfterChildEnded` (KV). */
const ABORT_CHILD_ENDED = "test:abort-child-ended";
/** The run reports to its shard of the run index (KV). */
const SHARDED = "test:index-sharded";
/** How many more activations `killActivations` kills (KV). */
const KILLS = "test:kill-activations";

/** The run index as the Workers pool runs it: it can refuse reports, and counts them. */
export class TestRunIndexDO extends RunIndexDO {
  private failUpserts = 0;
  private reports = 0;
  private clockAhead = 0;

  /** Moves the index's clock forward: the stuck-run sweep measures a run's silence by it. */
  async advanceClock(ms: number): Promise<void> {
    this.clockAhead += ms;
  }

  protected override now(): number {
    return Date.now() + this.clockAhead;
  }

  override async upsert(s: RunSummary): Promise<{ applied: boolean }> {
    this.reports++;
    if (this.failUpserts > 0) {
      this.failUpserts--;
      throw new Error("index write failed (injected by a test)");
    }
    return super.upsert(s);
  }

  /** The next `n` upserts throw, as a failed index write would. */
  async failNextUpserts(n: number): Promise<void> {
    this.failUpserts = n;
  }

  /** Reports received, rows read and written since construction, and the database's bytes (cost reports). */
  async storageStats(): Promise<{ reports: number; rowsRead: number; rowsWritten: number; databaseSize: number }> {
    return { reports: this.reports, rowsRead: this.sql.rowsRead, rowsWritten: this.sql.rowsWritten, databaseSize: this.ctx.storage.sql.databaseSize };
  }
}

/** What tests may ask of a run's object: the app's RPC plus TestRunDO's. */
export type TestRunRpc = RunRpc &
  Pick<
    TestRunDO,
    | "setTestHooks"
    | "setOtelVars"
    | "wake"
    | "storageStats"
    | "advanceClock"
    | "holdAt"
    | "heldAt"
    | "release"
    | "tracePoints"
    | "killActivations"
    | "abortAfterIo"
    | "abortAfterChildEnded"
    | "useShardedIndex"
    | "outboundRequests"
  >;
export type TestRunIndexRpc = RunIndexRpc & Pick<TestRunIndexDO, "failNextUpserts" | "storageStats" | "advanceClock">;

export const testRun = (env: Env, id: string) => env.RUNS.getByName(id) as unknown as TestRunRpc;
export const testRunIndex = (env: Env) => env.RUN_INDEX.getByName("index") as unknown as TestRunIndexRpc;
