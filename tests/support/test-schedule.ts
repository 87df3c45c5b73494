import { ScheduleDO } from "../../durable-objects/schedule/schedule";
import type { ScheduleRpc } from "../../src/schedules/api";

const CLOCK = "test_clock_offset";

/** A schedule's object as the Workers pool runs it: its clock is set by the test (kept in KV, so it outlives a restart). */
export class TestScheduleDO extends ScheduleDO {
  /** The schedule's clock reads `at` now, and runs on from there. */
  async setClock(at: number): Promise<void> {
    this.ctx.storage.kv.put(CLOCK, at - Date.now());
  }

  async restart(): Promise<void> {
    this.ctx.abort("restarted by a test");
  }

  async alarmAt(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }

  protected override now(): number {
    return Date.now() + (this.ctx.storage.kv.get<number>(CLOCK) ?? 0);
  }
}

export type TestScheduleRpc = ScheduleRpc & Pick<TestScheduleDO, "setClock" | "restart" | "alarmAt">;
export const testSchedule = (env: Env, id: string) => env.SCHEDULES.getByName(id) as unknown as TestScheduleRpc;
