import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mailer } from "../../src/email/mailer";
import { effectCount, effectUrl, modelRequests, script, stub } from "./helpers";
import { object, statusEvents } from "./interleave";

/**
 * Review 3: a cancel answered `cancelled` while the activation is inside a step, between the
 * step's cancel check (activation.ts `beforeStep`) and the effect the step then makes. The
 * harness holds the object only at io points, never at a step's own awaits (a connection slot,
 * a second recipient of one notifier), so it never lands a cancel there.
 */

afterEach(() => vi.restoreAllMocks());

/** Polls `fn` until it holds (a synchronisation point of the test, not a timed assertion). */
async function until(fn: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
}

describe("a cancel answered while a step waits inside itself", () => {
  it("a tool call waiting for one of the activation's six connections is sent after the cancel answered", async () => {
    const id = "r3-cancel-slot";
    const slow = `${id}-slow`;
    // Six POSTs whose answers take 3 s (their headers too: each holds a connection), then a seventh that posts a counted effect.
    await script(
      slow,
      Array.from({ length: 6 }, () => ({ delay_ms: 3_000, text: "slow" })),
    );
    const slowCall = { name: "fx_fetch", arguments: { url: `${env.FAKE_OPENAI_URL}/scripts/${slow}/v1/chat/completions`, method: "POST", body: "{}" } };
    const late = { name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "late" } };
    await script("chat-writer", [{ tool_calls: [...Array.from({ length: 6 }, () => slowCall), late] }, { text: "done" }]);
    await stub(id).start({ id, worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });

    const driving = runDurableObjectAlarm(object(id)).catch((e: unknown) => e);
    // The six are at the upstream, waiting for their headers: the seventh waits in line for a connection.
    await until(async () => (await modelRequests(slow)).length === 6, "six slow requests in flight");
    expect(await effectCount(id)).toBe(0);
    expect(await stub(id).cancel()).toEqual({ ok: true, status: "cancelled" });
    await driving;

    expect((await stub(id).status())!.status).toBe("cancelled");
    expect(await statusEvents(id)).toEqual(["run_queued", "run_running", "run_cancelled"]);
    // The seventh POST had not been sent when the cancel answered; it must not be sent after it.
    expect(await effectCount(id), "a POST sent after the cancel answered").toBe(0);
  });

  it("a notifier mailing two approvers mails the second after the cancel answered (its approval voided)", async () => {
    const id = "r3-cancel-mail";
    await script("named-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(id), method: "POST", body: "x" } }] }, { text: "done" }]);
    const sent: string[] = [];
    let reached!: () => void;
    const atFirst = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const real = mailer.send.bind(mailer);
    vi.spyOn(mailer, "send").mockImplementation(async (e, mail) => {
      sent.push(mail.to);
      if (sent.length === 1) {
        reached();
        await released; // the first send is on its way (an email send: the input gate is open)
      }
      return real(e, mail);
    });
    await stub(id).start({ id, worker: "named-writer", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const driving = runDurableObjectAlarm(object(id)).catch((e: unknown) => e);
    await atFirst;
    expect(await stub(id).cancel()).toEqual({ ok: true, status: "cancelled" });
    const mailedBeforeCancel = sent.length;
    release();
    await driving;

    const view = (await stub(id).status())!;
    expect(view.status).toBe("cancelled");
    expect(view.approvals[0]!.status).toBe("voided");
    expect(mailedBeforeCancel).toBe(1);
    // "Please approve" mail for an approval the cancel voided, sent after the cancel answered.
    expect(sent, "approval emails sent after the cancel answered").toHaveLength(mailedBeforeCancel);
  });
});
