import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { IoPoint } from "../../durable-objects/run/io";
import { SOON_MS } from "../support/test-objects";
import { stub } from "./helpers";

export const object = (id: string) => env.RUNS.getByName(id);
export const alarmOf = (id: string) => runInDurableObject(object(id), (_o, state) => state.storage.getAlarm());
/** The run's status events (`run_*` rows of `events`), in order. */
export const statusEvents = (id: string) =>
  runInDurableObject(object(id), (_o, state) =>
    state.storage.sql
      .exec<{ type: string }>(
        "SELECT type FROM events WHERE type LIKE 'run\\_%' ESCAPE '\\' AND type NOT IN ('run_checkpoint', 'run_retry', 'run_swept') ORDER BY seq",
      )
      .toArray()
      .map((r) => r.type),
  );

/** What a hold is on: which pass through the point, before its I/O starts or after it completed. */
export interface Hold {
  point: IoPoint;
  nth?: number;
  when?: "before" | "after";
}

/**
 * Holds run `id` at `hold` while `drive` runs it (its alarm, by default), lands `land()` there,
 * then releases it and lets `drive` finish. Returns what `land` returned, or `{ reached: false }`
 * when the drive ended without passing the point.
 */
export async function landAt<T>(
  id: string,
  hold: Hold,
  land: () => Promise<T>,
  drive: () => Promise<unknown> = () => runDurableObjectAlarm(object(id)),
): Promise<{ reached: true; landed: T; drove: unknown } | { reached: false }> {
  await stub(id).holdAt(hold.point, { nth: hold.nth ?? 1, when: hold.when ?? "before" });
  const driving = drive().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const reached = await Promise.race([stub(id).heldAt(20_000), driving.then(() => false)]);
  if (!reached) {
    await stub(id).release();
    await driving;
    return { reached: false };
  }
  const landed = await land();
  await stub(id).release();
  const drove = await driving;
  if ("error" in drove) throw drove.error;
  return { reached: true, landed, drove: drove.value };
}

/** A wake-up requested before now is armed no later than it asked for (the test pool arms wake-ups SOON_MS ahead). */
export async function expectWoken(id: string, what: string): Promise<void> {
  const alarm = await alarmOf(id);
  expect(alarm, `${what}: an alarm is armed`).not.toBeNull();
  expect(alarm!, `${what}: the wake-up requested is not moved later`).toBeLessThanOrEqual(Date.now() + SOON_MS);
}
