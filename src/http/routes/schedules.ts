import { Hono } from "hono/tiny";
import type * as z from "zod";
import { type deletedSchedule, listSchedulesQuery, SCHEDULE_ID, type schedulePage, type scheduleView, type triggeredRun } from "../../api/schedules";
import { scheduleBody, scheduleIndex, scheduleStub, type ScheduleAnswer } from "../../schedules/api";
import { createSchedule } from "../../schedules/create";
import { httpError, issueList } from "../http-error";
import { jsonBody } from "../validate";

/**
 * Runtime schedules: `POST /schedules` (201; the same id and spec again: 200), `GET /schedules`
 * (the listing, paged by id), `GET /schedules/:id`, `POST /schedules/:id/pause`, `/resume`,
 * `/trigger` (a run now), `DELETE /schedules/:id`. Each schedule is its own object.
 */
export const schedules = new Hono<{ Bindings: Env }>();

schedules.post("/", async (c) => {
  needBindings(c.env);
  const { id, paused, ...spec } = await jsonBody(c, scheduleBody);
  const made = answered(await createSchedule(c.env, id ?? `s-${crypto.randomUUID()}`, spec, { paused, created_by: { kind: "api" } }));
  return c.json(made.view satisfies z.input<typeof scheduleView>, made.created ? 201 : 200);
});

schedules.get("/", async (c) => {
  needBindings(c.env);
  const q = listSchedulesQuery.safeParse(c.req.query());
  if (!q.success) throw httpError(400, { error: "invalid query parameters", issues: issueList(q.error) });
  const page = await scheduleIndex(c.env).list(q.data.cursor, q.data.limit);
  return c.json({ schedules: page.schedules, next_cursor: page.next } satisfies z.input<typeof schedulePage>);
});

schedules.get("/:id", async (c) => {
  const view = await stubFor(c.env, c.req.param("id")).view();
  if (!view) throw unknown(c.req.param("id"));
  return c.json(view satisfies z.input<typeof scheduleView>);
});

schedules.post("/:id/pause", async (c) =>
  c.json(answered(await stubFor(c.env, c.req.param("id")).pause(), c.req.param("id")).view satisfies z.input<typeof scheduleView>),
);
schedules.post("/:id/resume", async (c) =>
  c.json(answered(await stubFor(c.env, c.req.param("id")).resume(), c.req.param("id")).view satisfies z.input<typeof scheduleView>),
);

/** A run now (202), whether the schedule is paused or not; never retried by the client (each is a new run). */
schedules.post("/:id/trigger", async (c) => {
  const { run_id } = answered(await stubFor(c.env, c.req.param("id")).trigger(), c.req.param("id"));
  return c.json({ id: c.req.param("id"), run_id } satisfies z.input<typeof triggeredRun>, 202);
});

schedules.delete("/:id", async (c) => {
  answered(await stubFor(c.env, c.req.param("id")).remove(), c.req.param("id"));
  return c.json({ id: c.req.param("id"), deleted: true } as const satisfies z.input<typeof deletedSchedule>);
});

const unknown = (id: string) => httpError(404, { error: `unknown schedule "${id.slice(0, 80)}"` });

/** The schedule's object, or 404 for an id that cannot be one (no object is made for it). */
function stubFor(env: Env, id: string) {
  needBindings(env);
  if (!SCHEDULE_ID.test(id)) throw unknown(id);
  return scheduleStub(env, id);
}

/** An answer's value, or its refusal as the response (404 naming the id). */
function answered<T>(a: ScheduleAnswer<T>, id?: string): T {
  if (a.ok) return a;
  throw a.status === 404 && id !== undefined ? unknown(id) : httpError(a.status, { error: a.error });
}

function needBindings(env: Env): void {
  if (!env.SCHEDULES || !env.SCHEDULE_INDEX)
    throw httpError(503, {
      error: "this deployment has no SCHEDULES and SCHEDULE_INDEX bindings (ScheduleDO, ScheduleIndexDO): add them to wrangler.toml (docs/operate.md)",
    });
}
