import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { testSchedule } from "../support/test-schedule";
import { settle, stub } from "./helpers";

/**
 * `approval_mode: approve_all` is set with the API token when a run starts. A run's code
 * (`ctx.schedule`, whose spec may come from a model's tool arguments) must not mint schedules
 * whose runs approve every call without a person, when the run itself asks.
 */
describe("ctx.schedule and approval_mode", () => {
  it("a run that asks cannot create an approve_all schedule; one that approves all may, and ask/reject_all are always allowed", async () => {
    const run = "review4-sched-escalate";
    await stub(run).start({
      id: run,
      worker: "fn-scheduler",
      input: {
        specs: [
          { worker: "fn-shout", input: { kind: "check" }, every: "1h", approval_mode: "approve_all" },
          { worker: "fn-shout", input: { kind: "check" }, every: "2h", approval_mode: "reject_all" },
          { worker: "fn-shout", input: { kind: "check" }, every: "3h" },
        ],
      },
      approvalMode: "ask",
      budget: {},
    });
    const done = await settle(run);
    expect(done.status).toBe("succeeded");
    const [all, rejecting, asking] = done.output as Array<{ id?: string; refused?: string }>;
    expect(all!.refused).toMatch(/ctx\.schedule: approval_mode: approve_all .*the run's own approval_mode is ask/);
    expect(rejecting!.id).toMatch(/^run-/);
    expect(asking!.id).toMatch(/^run-/);
    expect(await testSchedule(env, asking!.id!).view()).toMatchObject({ spec: { approval_mode: "ask" } });

    const trusted = "review4-sched-approve-all";
    await stub(trusted).start({
      id: trusted,
      worker: "fn-scheduler",
      input: { specs: [{ worker: "fn-shout", input: { kind: "check" }, every: "1h", approval_mode: "approve_all" }] },
      approvalMode: "approve_all",
      budget: {},
    });
    const ok = await settle(trusted);
    expect((ok.output as Array<{ id?: string }>)[0]!.id).toMatch(/^run-/);
  });
});
