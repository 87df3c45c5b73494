import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runIdFor } from "../../src/triggers/delivery";
import { settle, stub } from "../durable-objects/helpers";
import worker from "../support/test-worker";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 23, 6, 30, 0);
const fire = (scheduledTime: number) => worker.scheduled!(createScheduledController({ cron: "30 * * * *", scheduledTime }), env);
const runAt = (time: number) => runIdFor("overlap-digest", `schedule:${new Date(time).toISOString()}`);

describe("a schedule's concurrency (the trigger is its one key)", () => {
  it("on_busy: skip — a firing while the last run works starts nothing; once it ended, the next firing starts", async () => {
    await fire(T0);
    const first = await runAt(T0);
    expect((await stub(first).status())?.status).toBe("queued");
    await fire(T0 + HOUR);
    expect(await stub(await runAt(T0 + HOUR)).status()).toBeNull();
    expect(await settle(first)).toMatchObject({ status: "succeeded" });
    await fire(T0 + 2 * HOUR);
    expect((await stub(await runAt(T0 + 2 * HOUR)).status())?.input).toEqual({ since_hours: 1, at: new Date(T0 + 2 * HOUR).toISOString() });
    // The same firing again (a retried event) is the same outcome: still one run.
    await fire(T0 + 2 * HOUR);
    expect(await stub(await runAt(T0 + HOUR)).status()).toBeNull();
  });
});
