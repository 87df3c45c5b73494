import { exports } from "cloudflare:workers";
import { createMimeMessage } from "mimetext/browser";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OutgoingMail } from "../../src/email/mailer";
import { runIdFor } from "../../src/triggers/delivery";
import { captureMail, deliver, parseMail } from "../email/support";
import { modelRequests, script, settle, stub } from "./helpers";

/**
 * SQLite bounds a LIKE/GLOB pattern at 50 bytes (production and local workerd alike): a
 * conversation that found its messages by `<root>/message:%` answered 500 to every message
 * of a run whose root worker's name has more than 40 characters. Names may have 64.
 */
const ROOT = "conversing-root-worker-named-with-all-sixty-four-characters-0064";
const TRIGGER_TO = "long-root@example.com";
const ANN = "ann@example.com";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };
const postMessage = (id: string, body: { text: string; id?: string }) =>
  exports.default.fetch(new Request(`https://edgework.test/runs/${id}/messages`, { method: "POST", headers: auth, body: JSON.stringify(body) }));
const userTexts = async (id: string) => (await stub(id).status())!.messages.filter((m) => m.role === "user").map((m) => m.text);

let sent: OutgoingMail[] = [];
beforeEach(() => {
  sent = captureMail();
});
afterEach(() => vi.restoreAllMocks());

describe("a root worker named with 64 characters converses", () => {
  it("the fixture's name is the longest a worker may have", () => {
    expect(ROOT).toHaveLength(64);
  });

  it("by API: POST /runs/:id/messages twice, one history; a message's id sent again adds nothing", async () => {
    await script(ROOT, [{ text: "a1" }, { text: "a2" }, { text: "a3" }]);
    const id = "long-root-api";
    await stub(id).start({ id, worker: ROOT, input: { from: ANN, subject: "s", text: "m1" }, approvalMode: "ask", budget: {} });
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "a1" });
    for (const [n, text] of ["m2", "m3"].entries()) {
      const res = await postMessage(id, { text, id: text });
      expect(res.status, await res.clone().text()).toBe(202);
      expect(await res.json()).toMatchObject({ status: "running", message: n + 2 });
      expect(await settle(id)).toMatchObject({ status: "succeeded", output: `a${n + 2}` });
    }
    // Found among the run's message steps by its id: the same message, nothing new.
    const again = await postMessage(id, { text: "m2", id: "m2" });
    expect(await again.json()).toMatchObject({ status: "succeeded", message: 2, duplicate: true });
    expect(await userTexts(id)).toEqual([expect.any(String), "m2", "m3"]);
    expect(await modelRequests(ROOT)).toHaveLength(3);
  });

  it("by email (reply: true): a first mail, then two replies, each answered", async () => {
    await script(ROOT, [{ text: "e1" }, { text: "e2" }, { text: "e3" }]);
    const first = "<long-root-1@example.com>";
    expect(await deliver(ANN, TRIGGER_TO, mail({ subject: "Long", text: "first", messageId: first }))).toEqual([]);
    const id = await runIdFor("long-root-mail", `message-id:${ANN}\n${first}`);
    expect(await settle(id)).toMatchObject({ status: "succeeded", output: "e1" });
    for (const [n, text] of ["second", "third"].entries()) {
      // Answered as a mail client answers our last answer: to its Reply-To (else its From), naming its Message-ID.
      const ours = await parseMail(sent.filter((m) => m.to === ANN).at(-1)!);
      const rejects = await deliver(
        ANN,
        ours.replyTo?.[0]?.address ?? TRIGGER_TO,
        mail({ subject: "Re: Long", text, messageId: `<long-root-r${n}@example.com>`, inReplyTo: ours.messageId!, references: [first, ours.messageId!] }),
      );
      expect(rejects).toEqual([]);
      expect(await settle(id)).toMatchObject({ status: "succeeded", output: `e${n + 2}` });
    }
    expect(await userTexts(id)).toEqual([expect.any(String), "second", "third"]);
    expect(sent.filter((m) => m.to === ANN)).toHaveLength(3);
  });
});

function mail(m: { subject: string; text: string; messageId: string; inReplyTo?: string; references?: string[] }): string {
  const msg = createMimeMessage();
  msg.setSender(ANN);
  msg.setRecipient(TRIGGER_TO);
  msg.setSubject(m.subject);
  msg.setHeader("Message-ID", m.messageId);
  if (m.inReplyTo) msg.setHeader("In-Reply-To", m.inReplyTo);
  if (m.references) msg.setHeader("References", m.references.join(" "));
  msg.addMessage({ contentType: "text/plain", data: m.text });
  return msg.asRaw();
}
