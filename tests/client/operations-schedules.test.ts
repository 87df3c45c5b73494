import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { BadRequestError, ConflictError, NotFoundError } from "../../src/client";
import { testRunIndex } from "../support/test-objects";
import { stub } from "../durable-objects/helpers";
import { appClient } from "./app-client";

const client = appClient();

describe("edgework/client: operations", () => {
  it("dryRun lists, create starts one (its Idempotency-Key on every attempt), get and cancel report it", async () => {
    const ids = ["cl-op-1", "cl-op-2"];
    for (const id of ids) await stub(id).start({ id, worker: "fn-napper", input: {}, approvalMode: "ask", budget: {}, attributes: { batch: "client-op" } });
    await vi.waitFor(async () => expect((await testRunIndex(env).listRuns({ attributes: { batch: "client-op" }, limit: 10 })).runs).toHaveLength(2));
    const dry = await client.operations.dryRun({ action: "cancel", filter: { attributes: { batch: "client-op" } } });
    expect(dry.runs.map((r) => r.id).sort()).toEqual(ids);
    const seen: Request[] = [];
    const started = await appClient({ seen }).operations.create({
      action: "cancel",
      filter: { attributes: { batch: "client-op" } },
      idempotencyKey: "cl-op-key",
    });
    expect(seen[0]!.headers.get("idempotency-key")).toBe("cl-op-key");
    expect((await client.operations.create({ action: "cancel", filter: { attributes: { batch: "client-op" } }, idempotencyKey: "cl-op-key" })).id).toBe(
      started.id,
    );
    expect(await client.operations.get(started.id)).toMatchObject({ id: started.id, action: "cancel", status: "running" });
    expect(await client.operations.cancel(started.id)).toMatchObject({ status: "cancelled" });
    await expect(client.operations.create({ action: "cancel", filter: {} })).rejects.toBeInstanceOf(BadRequestError);
    await expect(client.operations.get("op-00000000-0000-0000-0000-000000000000")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("edgework/client: schedules", () => {
  it("create, get, list, pause, resume, trigger and delete; another spec under an id → ConflictError; gone → NotFoundError", async () => {
    const made = await client.schedules.create({
      id: "cl-sched",
      worker: "fn-shout",
      input: { kind: "x" },
      every: "6h",
      attributes: { team: "ops" },
      approvalMode: "approve_all",
    });
    expect(made).toMatchObject({ id: "cl-sched", status: "active", spec: { every: "6h", approval_mode: "approve_all", attributes: { team: "ops" } } });
    expect(await client.schedules.get("cl-sched")).toMatchObject({ id: "cl-sched", fires: 0 });
    await expect(client.schedules.create({ id: "cl-sched", worker: "fn-shout", input: { kind: "x" }, every: "7h" })).rejects.toBeInstanceOf(ConflictError);
    const listed = [];
    for await (const page of client.schedules.list({ limit: 1 })) listed.push(...page.schedules);
    expect(listed.map((s) => s.id)).toContain("cl-sched");
    expect(await client.schedules.pause("cl-sched")).toMatchObject({ status: "paused", next_fire_at: null });
    expect(await client.schedules.resume("cl-sched")).toMatchObject({ status: "active" });
    const { run_id } = await client.schedules.trigger("cl-sched");
    expect((await client.runs.get(run_id)).attributes).toEqual({ team: "ops" });
    expect(await client.schedules.delete("cl-sched")).toEqual({ id: "cl-sched", deleted: true });
    await expect(client.schedules.get("cl-sched")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.schedules.create({ worker: "fn-shout", every: "1s" })).rejects.toBeInstanceOf(BadRequestError);
  });
});
