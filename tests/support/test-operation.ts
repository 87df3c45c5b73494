import { OperationDO } from "../../durable-objects/operation/operation";
import type { OperationRpc } from "../../src/operations/api";

/** How far ahead the test pool arms an operation's alarms: tests drive them with runDurableObjectAlarm, which the real scheduler would race. */
const AHEAD_MS = 60_000;

/** An operation's object as the Workers pool runs it: alarms a minute ahead, rows counted, and a cut after the nth run acted on. */
export class TestOperationDO extends OperationDO {
  private cutAfter = 0;
  private cancelAfter = 0;
  private actedOn = 0;

  /** The object resets itself (as an eviction would) once `n` more runs were acted on, in the alarm that acts on them. */
  async cutOffAfter(n: number): Promise<void> {
    this.cutAfter = n;
    this.actedOn = 0;
  }

  /** A cancel lands (as a request would, while the batch awaits its runs) once `n` more runs were acted on. */
  async cancelAfterActs(n: number): Promise<void> {
    this.cancelAfter = n;
    this.actedOn = 0;
  }

  /** Resets the object now: what it wrote stays, what it held in memory is gone. */
  async restart(): Promise<void> {
    this.ctx.abort("restarted by a test");
  }

  async storageStats(): Promise<{ rowsRead: number; rowsWritten: number }> {
    return { rowsRead: this.sql.rowsRead, rowsWritten: this.sql.rowsWritten };
  }

  protected override soon(): number {
    return Date.now() + AHEAD_MS;
  }

  protected override later(): number {
    return Date.now() + AHEAD_MS;
  }

  protected override async acted(): Promise<void> {
    this.actedOn++;
    if (this.cancelAfter > 0 && this.actedOn >= this.cancelAfter) {
      this.cancelAfter = 0;
      await this.cancel();
    }
    if (this.cutAfter > 0 && this.actedOn >= this.cutAfter) {
      this.cutAfter = 0;
      this.ctx.abort("cut off mid-batch by a test");
    }
  }
}

export type TestOperationRpc = OperationRpc & Pick<TestOperationDO, "cutOffAfter" | "cancelAfterActs" | "restart" | "storageStats">;
export const testOperation = (env: Env, id: string) => env.OPERATIONS.getByName(id) as unknown as TestOperationRpc;
