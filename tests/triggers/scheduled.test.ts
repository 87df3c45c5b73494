import { createScheduledController, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../support/test-worker";
import { runIdFor } from "../../src/triggers/delivery";
import { withScheduledTime } from "../../src/triggers/scheduled-time";
import { describeTrigger } from "../../src/views/format";
import { stub } from "../durable-objects/helpers";

const SIX_AM = Date.UTC(2026, 10, 23, 6, 0, 0);
const DAY = 86_400_000;
const fire = (cron: string, scheduledTime = SIX_AM) => worker.scheduled!(createScheduledController({ cron, scheduledTime }), env);
const runObjects = async () => (await listDurableObjectIds(env.RUNS)).length;
let before = 0;
/** Runs started since the test began (storage is shared by the tests of a file). */
const runCount = async () => (await runObjects()) - before;
const runOf = async (trigger: string, time = SIX_AM) => stub(await runIdFor(trigger, `schedule:${new Date(time).toISOString()}`)).status();

beforeEach(async () => {
  before = await runObjects();
});

describe("scheduled triggers", () => {
  it("an event starts exactly the triggers with its expression, with the scheduled time in their input", async () => {
    await fire("0 6 * * *");
    expect(await runCount()).toBe(2);
    expect(await runOf("nightly-digest")).toMatchObject({
      worker: "digest-echo",
      status: "queued",
      input: { since_hours: 24, at: "2026-11-23T06:00:00.000Z" },
      trigger: { kind: "schedule", name: "nightly-digest", cron: "0 6 * * *", scheduled_time: "2026-11-23T06:00:00.000Z" },
      attributes: { cadence: "daily", team: "ops" },
    });
    expect(await runOf("nightly-digest-short")).toMatchObject({
      input: { since_hours: 12, at: "since 2026-11-23T06:00:00.000Z, again 2026-11-23T06:00:00.000Z" },
      attributes: {},
    });
  });

  it("the same event twice starts each run once; the next day's event starts new ones", async () => {
    const day = SIX_AM + 7 * DAY;
    await fire("0 6 * * *", day);
    await fire("0 6 * * *", day);
    expect(await runCount()).toBe(2);
    await fire("0 6 * * *", day + DAY);
    expect(await runCount()).toBe(4);
    expect(await runOf("nightly-digest", day + DAY)).toMatchObject({ input: { at: "2026-12-01T06:00:00.000Z" } });
  });

  it("a trigger's budget is the run's budget", async () => {
    const time = SIX_AM + 21 * DAY;
    await fire("0 * * * *", time);
    const id = await runIdFor("hourly-digest", `schedule:${new Date(time).toISOString()}`);
    const stored = await runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.sql.exec("SELECT budget FROM run").one().budget as string);
    expect(JSON.parse(stored)).toEqual({ maxCostUsd: 0.5, onExceed: "ask" });
  });

  it("another expression starts only its own trigger; an expression no trigger uses starts nothing", async () => {
    await fire("0 * * * *", SIX_AM + 14 * DAY);
    expect(await runCount()).toBe(1);
    expect(await runOf("hourly-digest", SIX_AM + 14 * DAY)).toMatchObject({ input: { since_hours: 1 } });
    await fire("*/5 * * * *");
    // Not normalised: Cloudflare passes the expression exactly as wrangler.toml lists it.
    await fire("0  6 * * *");
    expect(await runCount()).toBe(1);
  });
});

describe("{{scheduled_time}}", () => {
  it("is replaced in string values at any depth, never in keys, and nothing else is substituted", () => {
    const input = { a: "{{scheduled_time}}", "{{scheduled_time}}": 1, list: ["x {{scheduled_time}}", 2, null, { deep: "{{ scheduled_time }} {{other}}" }] };
    expect(withScheduledTime(input, "T")).toEqual({ a: "T", "{{scheduled_time}}": 1, list: ["x T", 2, null, { deep: "{{ scheduled_time }} {{other}}" }] });
  });
});

describe("what approvers read", () => {
  it("names the schedule and its time, or the email trigger and its sender, as what started the run", () => {
    expect(describeTrigger({ kind: "schedule", name: "nightly-digest", cron: "0 6 * * *", scheduled_time: "2026-11-23T06:00:00.000Z" })).toBe(
      "schedule nightly-digest (2026-11-23T06:00:00.000Z)",
    );
    expect(describeTrigger({ kind: "email", name: "support-mail", from: "ann@example.com", message_id: "<m1@example.com>" })).toBe(
      "email support-mail from ann@example.com",
    );
  });
});
