import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ScheduleView } from "../../src/schedules/api";
import { MAX_SCHEDULES } from "../../src/schedules/spec";
import { testSchedule } from "../support/test-schedule";
import { settle, stub } from "./helpers";
import { redeploy } from "../support/redeploy";
import { functions } from "../fixtures/functions/index";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const call = (method: string, path: string, body?: unknown) =>
  exports.default.fetch(new Request(`https://edgework.test${path}`, { method, headers: auth, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
const create = async (body: Record<string, unknown>) => {
  const res = await call("POST", "/schedules", body);
  return { status: res.status, body: (await res.json()) as ScheduleView & { error?: string; issues?: Array<{ path: string; message: string }> } };
};
/** One alarm of the schedule's object (a new stub each time: a restart leaves the old one broken). */
const fire = (id: string) => runDurableObjectAlarm(env.SCHEDULES.getByName(id));
const runOf = (schedule: string, at: number) => stub(`sched_${schedule}_${at}`).status();
const listingRowsWritten = () =>
  runInDurableObject(env.SCHEDULE_INDEX.getByName("schedules"), (o) => (o as unknown as { sql: { rowsWritten: number } }).sql.rowsWritten);
const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;

describe("runtime schedules", () => {
  it("a cron schedule in a time zone fires on time by its clock, one run per fire, and arms the next; it survives a restart and makes up no missed fires", async () => {
    const id = "weekly-berlin";
    // In the future (2030), as every clock of these tests: an alarm in the past would be fired by the runtime itself.
    await testSchedule(env, id).setClock(Date.UTC(2030, 0, 1));
    const made = await create({
      id,
      worker: "fn-shout",
      input: { kind: "at {{scheduled_time}}" },
      cron: "0 9 * * MON",
      timezone: "Europe/Berlin",
      attributes: { team: "ops" },
    });
    expect(made.status).toBe(201);
    const monday = Date.UTC(2030, 0, 7, 8); // 09:00 in Berlin (UTC+1 in January)
    expect(made.body).toMatchObject({ id, status: "active", next_fire_at: monday, fires: 0, created_by: { kind: "api" } });
    expect(await testSchedule(env, id).alarmAt()).toBe(monday);

    // Early (the clock is not there yet): re-armed, no run.
    await testSchedule(env, id).setClock(monday - 1000);
    await fire(id);
    expect(await runOf(id, monday)).toBeNull();
    expect(await testSchedule(env, id).alarmAt()).toBe(monday);

    const listingBefore = await listingRowsWritten();
    await testSchedule(env, id).setClock(monday + 500);
    await fire(id);
    expect(await runOf(id, monday)).toMatchObject({
      worker: "fn-shout",
      input: { kind: "at 2030-01-07T08:00:00.000Z" },
      trigger: { kind: "schedule", name: id, scheduled_time: "2030-01-07T08:00:00.000Z" },
      attributes: { team: "ops" },
    });
    expect(await testSchedule(env, id).view()).toMatchObject({
      fires: 1,
      last_fired_at: monday,
      last_run_id: `sched_${id}_${monday}`,
      next_fire_at: monday + WEEK,
    });
    expect(await testSchedule(env, id).alarmAt()).toBe(monday + WEEK);
    // A fire writes nothing to the listing.
    expect(await listingRowsWritten()).toBe(listingBefore);

    await testSchedule(env, id)
      .restart()
      .catch(() => {});
    await testSchedule(env, id).setClock(monday + 5 * WEEK + 1000);
    await fire(id);
    // One fire for the one due (the second Monday), none for the three missed since; the next is the sixth Monday.
    expect(await runOf(id, monday + WEEK)).not.toBeNull();
    for (const w of [2, 3, 4]) expect(await runOf(id, monday + w * WEEK)).toBeNull();
    expect(await testSchedule(env, id).view()).toMatchObject({ fires: 2, next_fire_at: monday + 6 * WEEK });
  });

  it("every: on its rhythm from creation; pause stops it, resume arms the next from now, trigger starts a run now, delete removes it", async () => {
    const id = "hourly";
    await testSchedule(env, id).setClock(Date.UTC(2030, 3, 1, 10, 20));
    const made = (await create({ id, worker: "fn-shout", input: { kind: "h" }, every: "1h" })).body;
    const t0 = made.created_at; // its anchor: the clock ran on a little since it was set
    expect(made.next_fire_at).toBe(t0 + HOUR);
    await testSchedule(env, id).setClock(t0 + HOUR + 5);
    await fire(id);
    expect(await testSchedule(env, id).view()).toMatchObject({ fires: 1, next_fire_at: t0 + 2 * HOUR });

    const paused = (await (await call("POST", `/schedules/${id}/pause`)).json()) as ScheduleView;
    expect(paused).toMatchObject({ status: "paused", next_fire_at: null });
    expect(await testSchedule(env, id).alarmAt()).toBeNull();
    expect(((await (await call("GET", "/schedules")).json()) as { schedules: Array<{ id: string; status: string }> }).schedules).toContainEqual(
      expect.objectContaining({ id, status: "paused" }),
    );
    const triggered = await call("POST", `/schedules/${id}/trigger`);
    expect(triggered.status).toBe(202);
    const { run_id } = (await triggered.json()) as { run_id: string };
    expect(run_id).toMatch(new RegExp(`^sched_${id}_now_`));
    expect((await stub(run_id).status())!.input).toEqual({ kind: "h" });

    await testSchedule(env, id).setClock(t0 + 4 * HOUR + 30 * 60_000);
    const resumed = (await (await call("POST", `/schedules/${id}/resume`)).json()) as ScheduleView;
    expect(resumed).toMatchObject({ status: "active", next_fire_at: t0 + 5 * HOUR });
    expect(await testSchedule(env, id).alarmAt()).toBe(t0 + 5 * HOUR);

    expect((await call("DELETE", `/schedules/${id}`)).status).toBe(200);
    expect((await call("GET", `/schedules/${id}`)).status).toBe(404);
    expect((await call("DELETE", `/schedules/${id}`)).status).toBe(404);
    expect(((await (await call("GET", "/schedules")).json()) as { schedules: Array<{ id: string }> }).schedules.map((s) => s.id)).not.toContain(id);
    expect(await testSchedule(env, id).alarmAt()).toBeNull();
  });

  it("ctx.schedule creates one schedule per call, however often the run replays; its refusals are recorded", async () => {
    const run = "sched-maker";
    const spec = { worker: "fn-shout", input: { kind: "check" }, cron: "0 9 * * MON", description: "check again every Monday" };
    await stub(run).start({
      id: run,
      worker: "fn-scheduler",
      input: { specs: [spec, { worker: "fn-shout", every: "1s" }, { worker: "nope", every: "1h" }], sleep: true },
      approvalMode: "ask",
      budget: {},
    });
    const paused = await settle(run);
    expect(paused.status).toBe("waiting");
    await runInDurableObject(env.RUNS.getByName(run), (_o, state) => state.abort("evicted")).catch(() => {});
    await stub(run).advanceClock(2 * 60_000);
    const done = await settle(run);
    expect(done.status).toBe("succeeded");
    const [made, often, unknown] = done.output as [{ id: string; next_fire_at: number }, { refused: string }, { refused: string }];
    expect(made.id).toMatch(/^run-[0-9a-f]{32}$/);
    expect(often.refused).toMatch(/ctx\.schedule: every: 1s is more often than a schedule may fire/);
    expect(unknown.refused).toMatch(/ctx\.schedule: unknown worker "nope"/);
    const listed = (
      (await (await call("GET", "/schedules?limit=200")).json()) as { schedules: Array<{ id: string; created_by: unknown; description: string }> }
    ).schedules;
    expect(listed.filter((s) => (s.created_by as { run?: string }).run === run)).toEqual([
      expect.objectContaining({ id: made.id, description: "check again every Monday", created_by: { kind: "run", run } }),
    ]);
    expect(await testSchedule(env, made.id).view()).toMatchObject({ spec: { cron: "0 9 * * MON", worker: "fn-shout" }, next_fire_at: made.next_fire_at });
  });

  it("a fire whose worker a deploy removed starts no run: its error is kept and the next fire is armed", async () => {
    const id = "orphaned";
    await testSchedule(env, id).setClock(Date.UTC(2030, 5, 1));
    const made = (await create({ id, worker: "fn-napper", every: "1d" })).body;
    redeploy({ functions: functions.filter((f) => f.name !== "fn-napper") });
    try {
      await testSchedule(env, id).setClock(made.next_fire_at! + 10);
      await fire(id);
    } finally {
      redeploy();
    }
    expect(await runOf(id, made.next_fire_at!)).toBeNull();
    expect(await testSchedule(env, id).view()).toMatchObject({
      fires: 0,
      last_error: expect.stringMatching(/^unknown worker "fn-napper"/),
      next_fire_at: made.next_fire_at! + 86_400_000,
    });
  });

  it("the same id and spec again is the same schedule (200); another spec under it is a 409", async () => {
    const body = { id: "same", worker: "fn-shout", input: { kind: "x" }, every: "2h" };
    expect((await create(body)).status).toBe(201);
    expect((await create(body)).status).toBe(200);
    const other = await create({ ...body, every: "3h" });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/exists with another spec/);
  });

  it("hostile specs, ids and inputs are refused with 400 naming the field, and make nothing", async () => {
    const base = { worker: "fn-shout", input: { kind: "x" } };
    for (const [bad, path] of [
      [{ ...base, cron: "0 0 31 2 *" }, "cron"],
      [{ ...base, cron: "* * * * * *" }, "cron"],
      [{ ...base, cron: "*  * * * *" }, "cron"],
      [{ ...base, cron: "@daily" }, "cron"],
      [{ ...base, cron: "x".repeat(10_000) }, "cron"],
      [{ ...base, every: "1s" }, "every"],
      [{ ...base, every: "59s" }, "every"],
      [{ ...base, every: "0m" }, "every"],
      [{ ...base, every: "999999999d" }, "every"],
      [{ ...base, every: "1 hour" }, "every"],
      [{ ...base, every: "1h", cron: "0 * * * *" }, "cron"],
      [{ ...base }, "cron"],
      [{ ...base, cron: "0 9 * * *", timezone: "Mars/Olympus" }, "timezone"],
      [{ ...base, every: "1h", timezone: "UTC" }, "timezone"],
      [{ ...base, every: "1h", id: "a/b" }, "id"],
      [{ ...base, every: "1h", id: "x".repeat(65) }, "id"],
      [{ ...base, every: "1h", id: "ré" }, "id"],
      [{ ...base, every: "1h", input: { kind: "y".repeat(70_000) } }, "input"],
      [{ ...base, every: "1h", attributes: { "Bad Name": "x" } }, "attributes.Bad Name"],
      [{ ...base, every: "1h", description: "line\nbreak" }, "description"],
      [{ ...base, every: "1h", description: "d".repeat(201) }, "description"],
      [{ ...base, every: "1h", worker: "../etc" }, "worker"],
      [{ ...base, every: "1h", extra: true }, "(root)"],
    ] as const) {
      const { status, body } = await create(bad as unknown as Record<string, unknown>);
      expect(status, JSON.stringify(bad).slice(0, 80)).toBe(400);
      expect(
        body.issues!.map((i) => i.path),
        JSON.stringify(bad).slice(0, 80),
      ).toContain(path);
    }
    const unknownWorker = await create({ worker: "nope", every: "1h" });
    expect(unknownWorker.status).toBe(400);
    expect(unknownWorker.body.error).toMatch(/unknown worker "nope"/);
    const badInput = await create({ worker: "fn-shout", input: { kind: 7 }, every: "1h" });
    expect(badInput.status).toBe(400);
    for (const id of ["a%2Fb", "x".repeat(65), "%00"]) expect((await call("GET", `/schedules/${id}`)).status, id).toBe(404);
    expect((await call("GET", "/schedules?limit=0")).status).toBe(400);
    expect((await call("GET", "/schedules?cursor=a%2Fb")).status).toBe(400);
    expect((await exports.default.fetch(new Request("https://edgework.test/schedules"))).status).toBe(401);
  });

  it(`at most ${MAX_SCHEDULES} per deployment: one more is refused with 409 and nothing is kept of it`, async () => {
    const listing = env.SCHEDULE_INDEX.getByName("schedules") as unknown as import("../../src/schedules/api").ScheduleIndexRpc;
    const have =
      ((await listing.list(undefined, 200)).schedules.length,
      await runInDurableObject(
        env.SCHEDULE_INDEX.getByName("schedules"),
        (_o, s) => s.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM schedules").one().n,
      ));
    for (let i = have; i < MAX_SCHEDULES; i++) {
      await listing.add({
        id: `filler-${i}`,
        worker: "fn-shout",
        cron: null,
        every: "1h",
        timezone: null,
        description: null,
        status: "active",
        created_by: { kind: "api" },
        created_at: 0,
        updated_at: 0,
      });
    }
    const refused = await create({ id: "one-too-many", worker: "fn-shout", input: { kind: "x" }, every: "1h" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/has 1000 schedules, the most it may have/);
    expect((await call("GET", "/schedules/one-too-many")).status).toBe(404);
    expect(await testSchedule(env, "one-too-many").alarmAt()).toBeNull();
  });
});
