import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { settle, stub } from "../durable-objects/helpers";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, method = "GET") => exports.default.fetch(new Request(`https://edgework.test${path}`, { method, headers: auth }));
const DAY = 86_400_000;
/** The last instant a JavaScript Date holds (ECMA-262: 8.64e15 ms after the epoch). */
const DATE_MAX = 8.64e15;

async function sleepUntil(id: string, at: number | string) {
  await stub(id).start({ id, worker: "fn-sleep-until", input: { at }, approvalMode: "ask", budget: {} });
  return settle(id);
}

describe("ctx.sleepUntil is bounded like ctx.sleep", () => {
  for (const [name, at] of [
    ["just past the Date range", DATE_MAX + 1],
    ["far past it", 1e20],
    ["before its start", -DATE_MAX - 1],
  ] as const) {
    it(`a time ${name} is refused, naming ctx.sleepUntil: the run fails, it never waits`, async () => {
      const id = `until-range-${name.replace(/\W+/g, "-")}`;
      const view = await sleepUntil(id, at);
      expect(view).toMatchObject({ status: "failed", waits: [] });
      expect(view.error?.message).toContain("ctx.sleepUntil");
      expect(view.error?.message).toContain("is not a time");
    });
  }

  it("three years ahead is refused (the longest wait from code is a year); 300 days ahead waits", async () => {
    const far = await sleepUntil("until-three-years", Date.now() + 3 * 365 * DAY);
    expect(far.status).toBe("failed");
    expect(far.error?.message).toMatch(/ctx\.sleepUntil: \d{4}-\d\d-\d\dT[\d:.]+Z is further ahead than the longest wait allowed here \(365d\)/);

    const near = await sleepUntil("until-300-days", new Date(Date.now() + 300 * DAY).toISOString());
    expect(near).toMatchObject({ status: "waiting", waits: [{ kind: "sleep" }] });
  });
});

describe("a wait's time out of the Date range, stored by an older version, breaks no reader", () => {
  it("GET /inbox, GET /runs/:id, the run page and POST /runs/:id/resume answer (no 500)", async () => {
    const id = "until-stored-out-of-range";
    expect((await sleepUntil(id, Date.now() + DAY)).status).toBe("waiting");
    // As an older version recorded it: ctx.sleepUntil(1e20) was accepted.
    await runInDurableObject(env.RUNS.getByName(id), (_o, state) => void state.storage.sql.exec("UPDATE waits SET until = 1e20"));

    const view = await call(`/runs/${id}`);
    expect(view.status).toBe(200);
    expect(await view.json()).toMatchObject({ status: "waiting", waits: [{ kind: "sleep", expires_at: 1e20 }] });

    const inbox = await call("/inbox");
    expect(inbox.status).toBe(200);
    expect(await inbox.text()).toContain(id);

    const page = await call(`/runs/${id}/view`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("until the given time");

    const resume = await call(`/runs/${id}/resume`, "POST");
    expect(resume.status).toBe(409);
    expect(((await resume.json()) as { error: string }).error).toContain("its earliest wait ends at");
    // Cancelling still ends it, as before.
    expect((await call(`/runs/${id}/cancel`, "POST")).status).toBe(200);
  });
});
