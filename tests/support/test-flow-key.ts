import { FlowKeyDO } from "../../durable-objects/flow/flow-key";
import type { FlowKeyRpc } from "../../src/triggers/flow/rpc";
import { flowObjectName, type KeyValue } from "../../src/triggers/flow/key";

/**
 * Deliveries asked of each key's object, by its name: kept in this module, which the test
 * and the objects share (the pool runs them in one isolate), so counting 500 objects asks none of them.
 */
export const deliveredTo = new Map<string, number>();

/** How far past its time the test pool arms a key's alarm: the tests drive it (runDurableObjectAlarm), the real scheduler never races them. */
const ALARM_AHEAD_MS = 600_000;

/**
 * The flow key's object as the Workers pool runs it (tests/support/test-worker.ts exports
 * it as FlowKeyDO): its clock can be moved forward (debounce, rate), and it counts the
 * deliveries it was asked and the rows it read and wrote.
 */
export class TestFlowKeyDO extends FlowKeyDO {
  private clockAhead = this.ctx.storage.kv.get<number>("test_clock_ahead") ?? 0;

  /** Counted in the object's KV (it outlives an eviction; one more row a delivery, in the test pool only). */
  override async deliver(...args: Parameters<FlowKeyDO["deliver"]>) {
    const name = this.ctx.id.name ?? this.ctx.id.toString();
    deliveredTo.set(name, (deliveredTo.get(name) ?? 0) + 1);
    this.ctx.storage.kv.put("test_delivered", (this.ctx.storage.kv.get<number>("test_delivered") ?? 0) + 1);
    return super.deliver(...args);
  }

  /** Moves the key's clock forward (kept in its KV: it outlives an eviction). */
  async advanceClock(ms: number): Promise<void> {
    this.clockAhead += ms;
    this.ctx.storage.kv.put("test_clock_ahead", this.clockAhead);
  }

  /** The next `n` acts fail before they reach a run: `throw` as an unreachable run would, `abort` as an eviction does. */
  async failNextActs(n: number, mode: "throw" | "abort"): Promise<void> {
    this.ctx.storage.kv.put("test_fail_acts", { n, mode });
  }

  protected override async acting(): Promise<void> {
    const fail = this.ctx.storage.kv.get<{ n: number; mode: "throw" | "abort" }>("test_fail_acts");
    if (!fail || fail.n <= 0) return;
    this.ctx.storage.kv.put("test_fail_acts", { ...fail, n: fail.n - 1 });
    // Committed first, as the output gate would before the act's request leaves: the eviction comes after the decision is durable.
    if (fail.mode === "abort") {
      await this.ctx.storage.sync();
      this.ctx.abort("evicted by a test, its decision written, before it acts");
    }
    throw new Error("the run's object could not be reached (injected by a test)");
  }

  protected override now(): number {
    return Date.now() + this.clockAhead;
  }

  protected override async setAlarm(at: number): Promise<void> {
    this.alarmsSet++;
    await super.setAlarm(Math.max(at, Date.now()) + ALARM_AHEAD_MS);
  }

  private alarmsSet = 0;

  /** Deliveries asked of this object; rows read and written (SQL; KV rows are not counted) and alarms set by this instance since it was constructed. */
  async storageStats(): Promise<{ delivered: number; rowsRead: number; rowsWritten: number; alarmsSet: number }> {
    return {
      delivered: this.ctx.storage.kv.get<number>("test_delivered") ?? 0,
      rowsRead: this.sql.rowsRead,
      rowsWritten: this.sql.rowsWritten,
      alarmsSet: this.alarmsSet,
    };
  }

  /** Bytes the key's line and batch hold together (what its bound counts). */
  async lineBytes(): Promise<number> {
    const sum = (t: string) => this.ctx.storage.sql.exec<{ n: number }>(`SELECT coalesce(sum(bytes), 0) AS n FROM ${t}`).one().n;
    return sum("line") + sum("batch");
  }

  /** The tables as they stand (what a test checks of the key). */
  async tables(): Promise<{ line: number; slots: string[]; batch: number; ledger: number }> {
    const n = (t: string) => this.ctx.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${t}`).one().n;
    const slots = this.ctx.storage.sql
      .exec<{ run: string }>("SELECT run FROM slots ORDER BY seq")
      .toArray()
      .map((r) => r.run);
    return { line: n("line"), slots, batch: n("batch"), ledger: n("ledger") };
  }
}

export type TestFlowKeyRpc = FlowKeyRpc & Pick<TestFlowKeyDO, "advanceClock" | "storageStats" | "tables" | "failNextActs" | "lineBytes">;

/** The object of (trigger, key) in the test pool. */
export const testFlowKey = async (env: Env, trigger: string, key: KeyValue[]) =>
  env.FLOW_KEYS.getByName(await flowObjectName(trigger, key)) as unknown as TestFlowKeyRpc;
