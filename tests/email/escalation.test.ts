import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import { effectCount, effectUrl, script, settle } from "../durable-objects/helpers";
import { captureMail, parseMail } from "./support";

const HOUR = 3_600_000;
let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

const call = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url.startsWith("http") ? url : `https://edgework.test${url}`, init));
const linkIn = (html: string) => /href="(https:\/\/edgework\.test\/approvals\/[^"?]+)\?intent=approve"/.exec(html)![1]!;

/** Moves the run's clock forward: every stored approval time moves back by `ms`. */
const advance = (id: string, ms: number) =>
  runInDurableObject(env.RUNS.getByName(id), (_o, state) => {
    state.storage.sql.exec("UPDATE approvals SET created_at = created_at - ?, expires_at = expires_at - ?", ms, ms);
    state.storage.sql.exec("UPDATE approval_mail SET due_at = due_at - ?", ms);
  });
const alarmAt = (id: string) => runInDurableObject(env.RUNS.getByName(id), (_o, state) => state.storage.getAlarm());

describe("reminders and escalation", () => {
  it("reminds once after 4h, escalates once after 24h; the escalated approver decides; the original link then says so", async () => {
    await script("escalate-writer", [
      { tool_calls: [{ id: "post", name: "fx_fetch", arguments: { url: effectUrl("escalate"), method: "POST", body: "x" } }] },
      { text: "posted" },
    ]);
    const res = await call("/runs", {
      method: "POST",
      headers: { Authorization: "Bearer test-token", "content-type": "application/json" },
      body: JSON.stringify({ worker: "escalate-writer", input: "go" }),
    });
    const { id } = (await res.json()) as { id: string };
    expect((await settle(id)).status).toBe("awaiting_approval");
    expect(sent.map((m) => m.to)).toEqual(["alice@example.com"]);
    const aliceLink = linkIn((await parseMail(sent[0]!)).html!);
    // The single alarm waits for the reminder, four hours out.
    expect(Math.abs((await alarmAt(id))! - (Date.now() + 4 * HOUR))).toBeLessThan(60_000);

    await advance(id, 3 * HOUR);
    expect(await runDurableObjectAlarm(env.RUNS.getByName(id))).toBe(true);
    expect(sent).toHaveLength(1); // not yet

    await advance(id, HOUR + 1000);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(sent.map((m) => m.to)).toEqual(["alice@example.com", "alice@example.com"]);
    const reminder = await parseMail(sent[1]!);
    expect(reminder.subject).toMatch(/^Reminder: approval needed/);
    expect(reminder.text).toContain("still waiting for your decision");
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(sent).toHaveLength(2); // the reminder goes out once

    await advance(id, 20 * HOUR);
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    await runDurableObjectAlarm(env.RUNS.getByName(id));
    expect(sent.map((m) => m.to)).toEqual(["alice@example.com", "alice@example.com", "lead@example.com"]);
    const escalation = await parseMail(sent[2]!);
    expect(escalation.subject).toMatch(/^Escalated: approval needed/);
    expect(escalation.text).toContain("escalated to you: alice@example.com has not decided it");
    // Now only the expiry is left to wait for.
    expect((await alarmAt(id))! - Date.now()).toBeGreaterThan(5 * 24 * HOUR);

    const leadLink = linkIn(escalation.html!);
    const decided = await call(leadLink, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "decision=approve" });
    expect(decided.status).toBe(200);
    expect(await settle(id)).toMatchObject({
      status: "succeeded",
      output: "posted",
      approvals: [{ status: "approved", decided_by: "approval link (lead@example.com)" }],
    });
    expect(await effectCount("escalate")).toBe(1);

    const late = await call(aliceLink);
    expect(late.status).toBe(409);
    expect(await late.text()).toContain("This approval was already approved by approval link (lead@example.com)");
    expect(sent).toHaveLength(3);
  });
});
