import { describe, expect, it } from "vitest";
import { parseYaml } from "../../src/build/yaml";
import { readWorkerFile } from "../../src/engine/catalog/worker-file";
import { readDeciderEntry, refusalOf } from "../../src/engine/approvals/deciders";
import { emailableDeciders } from "../../src/engine";
import { initiatorOf } from "../../src/runs/initiator";
import { workerFile } from "../engine/helpers";

const read = (approval: string) =>
  readWorkerFile("w.worker", workerFile(`name: w\ntoolsets:\n  fx: { use: http, allow: [example.com] }\napproval:\n${approval}`), parseYaml);

describe("notify: {slack} in a worker file", () => {
  it("takes a channel name or a channel/user id beside the email; the plain address form stays", () => {
    expect(read(`  notify: { email: a@example.com, slack: "#ops" }`)).toMatchObject({ problems: [], spec: { notify: "a@example.com", slack: "#ops" } });
    expect(read(`  notify: { slack: C0123ABCD }`)).toMatchObject({ problems: [], spec: { slack: "C0123ABCD" } });
    expect(read(`  notify: { slack: U0123ABCD }`).spec!.slack).toBe("U0123ABCD");
    const plain = read(`  notify: a@example.com`);
    expect(plain.spec).toMatchObject({ notify: "a@example.com" });
    expect(plain.spec!.slack).toBeUndefined();
  });

  it("refuses what is not a bounded channel or id, and unknown keys, naming the field", () => {
    for (const bad of [
      `"ops"`,
      `"#Ops"`,
      `"#${"a".repeat(81)}"`,
      `"#ops channel"`,
      `"<@U0123ABCD>"`,
      `"x0123ABCD"`,
      `"C01"`,
      `"#ops\\n"`,
      `"https://evil.test/"`,
    ]) {
      const { problems, spec } = read(`  notify: { slack: ${bad} }`);
      expect(problems.map((p) => `${p.field}: ${p.message}`).join("; "), bad).toMatch(/^approval\.notify/);
      expect(spec?.slack, bad).toBeUndefined();
    }
    expect(read(`  notify: { slack: "#ops", teams: x }`).problems.length).toBeGreaterThan(0);
  });
});

describe("slack:<user id> entries of ask", () => {
  it("are read (id upper-cased), never emailed, and refused when malformed", () => {
    expect(readDeciderEntry("slack:u0123abcd")).toEqual({ entry: "slack:U0123ABCD" });
    expect(readDeciderEntry("slack:bob")).toMatchObject({ problem: expect.stringMatching(/slack:<user id>/) });
    expect(emailableDeciders({ ask: ["slack:U0123ABCD", "lead@example.com"] })).toEqual(["lead@example.com"]);
  });

  it("name a Slack presser by id; a presser's verified email matches as any address; no email names no one; the API entry admits no Slack user", () => {
    const policy = { ask: ["slack:U0123ABCD", "lead@example.com", "api"] };
    expect(refusalOf(policy, { email: null, via: "slack", slack: "U0123ABCD" }, null)).toBeNull();
    expect(refusalOf(policy, { email: "lead@example.com", via: "slack", slack: "U9999ZZZZ" }, null)).toBeNull();
    expect(refusalOf(policy, { email: "eve@example.com", via: "slack", slack: "U9999ZZZZ" }, null)?.code).toBe("not_named");
    expect(refusalOf(policy, { email: null, via: "slack", slack: "U9999ZZZZ" }, null)?.code).toBe("no_person");
  });

  it("the Slack user who started a run may not decide it (by id, or by email), unless allow_initiator", () => {
    const initiator = initiatorOf({ kind: "slack", initiator: "slack:U0123ABCD" });
    expect(initiator).toBe("slack:U0123ABCD");
    expect(refusalOf(undefined, { email: null, via: "slack", slack: "U0123ABCD" }, initiator)?.code).toBe("initiator");
    expect(refusalOf({ ask: ["slack:U0123ABCD"], allowInitiator: true }, { email: null, via: "slack", slack: "U0123ABCD" }, initiator)).toBeNull();
    expect(refusalOf(undefined, { email: "lead@example.com", via: "slack", slack: "U0123ABCD" }, "lead@example.com")?.code).toBe("initiator");
    expect(initiatorOf({ kind: "slack", initiator: "slack:not-an-id" })).not.toBe("slack:not-an-id");
  });

  it("a starter cannot approve under another name: Slack starter vs a decider known by address, address starter vs a Slack user with no verified email (review 5)", () => {
    const slackStarter = "slack:U0123ABCD";
    // The Slack starter opens the email link or the inbox under their address: nothing ties it to their Slack id.
    expect(refusalOf(undefined, { email: "lead@example.com", via: "link" }, slackStarter)?.code).toBe("initiator");
    expect(refusalOf({ ask: ["lead@example.com"] }, { email: "lead@example.com", via: "inbox" }, slackStarter)?.code).toBe("initiator");
    // An email starter presses in Slack where Slack confirms no email.
    expect(refusalOf(undefined, { email: null, via: "slack", slack: "U0123ABCD" }, "lead@example.com")?.code).toBe("initiator");
    // Comparable names still decide: another Slack user, a Slack user whose confirmed email differs, an address that differs.
    expect(refusalOf(undefined, { email: null, via: "slack", slack: "U9999ZZZZ" }, slackStarter)).toBeNull();
    expect(refusalOf(undefined, { email: "ops@example.com", via: "slack", slack: "U9999ZZZZ" }, "lead@example.com")).toBeNull();
    expect(refusalOf(undefined, { email: "ops@example.com", via: "link" }, "lead@example.com")).toBeNull();
    expect(refusalOf({ allowInitiator: true }, { email: "lead@example.com", via: "link" }, slackStarter)).toBeNull();
  });
});
