import { describe, expect, it } from "vitest";
import { z } from "zod";
import committed from "../../schemas/worker.schema.json";
import { parseYaml } from "../../src/build/yaml";
import { MAX_DECIDERS, normalizeAddress, readDeciderEntry, refusalOf, UNREADABLE_INITIATOR } from "../../src/engine/approvals/deciders";
import { initiatorOf } from "../../src/runs/initiator";
import { readWorkerFile } from "../../src/engine/catalog/worker-file";
import type { Decider, DeciderPolicy } from "../../src/engine";
import { workerFile } from "./helpers";

const POLICY: DeciderPolicy = { ask: ["lead@example.com", "*@ops.example.com"] };
const link = (email: string): Decider => ({ email, via: "link" });

const read = (approval: string) =>
  readWorkerFile("w.worker", workerFile(`name: w\ntoolsets:\n  fx: { use: http, allow: [example.com] }\napproval:\n${approval}`), parseYaml);

describe("who may decide: the policy as written", () => {
  it("reads {ask, allow_initiator} as an ask policy with named deciders, normalized and without duplicates", () => {
    const { spec, problems } = read(
      `  notify: a@example.com\n  fx_fetch: { ask: [Lead@Example.COM, lead@example.com, "*@Ops.Example.com", api], allow_initiator: true }`,
    );
    expect(problems).toEqual([]);
    expect(spec!.approval).toEqual({ fx_fetch: "ask" });
    expect(spec!.deciders).toEqual({ fx_fetch: { ask: ["lead@example.com", "*@ops.example.com", "api"], allowInitiator: true } });
  });

  it("reads editable: false (alone it is an ask policy too); editable: true is the default and recorded as nothing; a non-boolean is refused naming it", () => {
    expect(read(`  fx_fetch: { ask: [lead@example.com], editable: false }`).spec!.deciders).toEqual({
      fx_fetch: { ask: ["lead@example.com"], editable: false },
    });
    const alone = read(`  fx_fetch: { editable: false }`).spec!;
    expect(alone.approval).toEqual({ fx_fetch: "ask" });
    expect(alone.deciders).toEqual({ fx_fetch: { editable: false } });
    expect(read(`  fx_fetch: { ask: [lead@example.com], editable: true }`).spec!.deciders).toEqual({ fx_fetch: { ask: ["lead@example.com"] } });
    const { problems } = read(`  fx_fetch: { editable: "no" }`);
    expect(problems.map((p) => p.field)).toEqual(["approval.fx_fetch.editable"]);
  });

  it("refuses wide patterns, non-ASCII and malformed entries, unknown keys, over-long entries and lists, naming the field", () => {
    const cases: Array<[string, string, RegExp]> = [
      [`{ ask: ["*@*"] }`, "approval.fx_fetch.ask", /nothing wider/],
      [`{ ask: ["*@com"] }`, "approval.fx_fetch.ask", /two or more labels/],
      [`{ ask: ["*@*.example.com"] }`, "approval.fx_fetch.ask", /nothing wider/],
      [`{ ask: ["lead*@example.com"] }`, "approval.fx_fetch.ask", /not a plain ASCII address/],
      [`{ ask: ["léad@example.com"] }`, "approval.fx_fetch.ask", /not a plain ASCII address/],
      [`{ ask: ["lead＠example.com"] }`, "approval.fx_fetch.ask", /not a plain ASCII address/],
      [`{ ask: ["lead@example.com\\u200b"] }`, "approval.fx_fetch.ask", /not a plain ASCII address/],
      [`{ ask: ["a@b@example.com"] }`, "approval.fx_fetch.ask", /not a plain ASCII address/],
      [`{ ask: [] }`, "approval.fx_fetch.ask", /.+/],
      [`{ ask: ["${"a".repeat(250)}@example.com"] }`, "approval.fx_fetch.ask.0", /.+/],
      [`{ ask: [${Array.from({ length: MAX_DECIDERS + 1 }, (_, i) => `p${i}@example.com`).join(", ")}] }`, "approval.fx_fetch.ask", /.+/],
      [`{ ask: [a@example.com], anyone: true }`, "approval.fx_fetch.anyone", /unknown key/],
      [`{ ask: a@example.com }`, "approval.fx_fetch.ask", /.+/],
      [`maybe`, "approval.fx_fetch", /must be allow, ask or deny/],
    ];
    for (const [policy, field, reason] of cases) {
      const { spec, problems } = read(`  fx_fetch: ${policy}`);
      expect(
        problems.map((p) => p.field),
        policy,
      ).toContain(field);
      expect(problems.find((p) => p.field === field)!.message, policy).toMatch(reason);
      expect(spec?.deciders, policy).toBeUndefined();
    }
  });

  it("the editor schema (schemas/worker.schema.json) takes the object form and refuses unknown keys in it", () => {
    const check = z.fromJSONSchema(committed as unknown as Parameters<typeof z.fromJSONSchema>[0]);
    expect(check.safeParse({ name: "x", approval: { gh_fetch: { ask: ["lead@example.com", "*@ops.example.com"], allow_initiator: true } } }).success).toBe(
      true,
    );
    expect(check.safeParse({ name: "x", approval: { gh_fetch: { ask: ["lead@example.com"], anyone: true } } }).success).toBe(false);
    expect(check.safeParse({ name: "x", approval: { gh_fetch: { ask: "lead@example.com" } } }).success).toBe(false);
  });
});

describe("who may decide: the check", () => {
  it("a named address or one at a named domain may; case does not matter; subdomains and look-alikes are not named", () => {
    expect(refusalOf(POLICY, link("lead@example.com"), null)).toBeNull();
    expect(refusalOf(POLICY, link("  LEAD@Example.COM "), null)).toBeNull();
    expect(refusalOf(POLICY, link("alice@ops.example.com"), null)).toBeNull();
    for (const stranger of [
      "mallory@example.com",
      "alice@sub.ops.example.com",
      "alice@ops.example.com.evil.test",
      "lead@example.com.evil.test",
      "lead@evil-example.com",
    ]) {
      expect(refusalOf(POLICY, link(stranger), null)?.code, stranger).toBe("not_named");
    }
  });

  it("Unicode tricks never become a named address: case folding (Kelvin sign), fullwidth @, zero-width and look-alike letters are refused", () => {
    // "\u212A".toLowerCase() === "k": a naive comparison would take this for kate@ops.example.com.
    expect("\u212Aate@ops.example.com".toLowerCase()).toBe("kate@ops.example.com");
    for (const trick of ["\u212Aate@ops.example.com", "lead\uff20example.com", "lead@example.com\u200b", "lead@ex\u0430mple.com", "lead@example.com\u0000"]) {
      expect(normalizeAddress(trick), trick).toBeNull();
      expect(refusalOf(POLICY, link(trick), null)?.code, trick).toBe("bad_address");
    }
  });

  it("the API token (and a session signed in with it) names no person: refused when people are named, unless the list says api", () => {
    expect(refusalOf(POLICY, { email: null, via: "api" }, null)?.code).toBe("no_person");
    expect(refusalOf(POLICY, { email: null, via: "inbox" }, null)?.reason).toMatch(/session signed in with the API token/);
    expect(refusalOf({ ask: ["api"] }, { email: null, via: "api" }, null)).toBeNull();
    expect(refusalOf(undefined, { email: null, via: "api" }, null)).toBeNull();
  });

  it("the run's initiator is refused by default, also without a named list, and allowed with allow_initiator", () => {
    expect(refusalOf(undefined, link("Lead@Example.com"), "lead@example.com")?.code).toBe("initiator");
    expect(refusalOf(POLICY, { email: "lead@example.com", via: "reply" }, "lead@example.com")?.code).toBe("initiator");
    expect(refusalOf({ ...POLICY, allowInitiator: true }, link("lead@example.com"), "lead@example.com")).toBeNull();
    expect(refusalOf(undefined, link("bob@example.com"), "lead@example.com")).toBeNull();
    // An address that cannot be compared cannot be told apart from the initiator's.
    expect(refusalOf(undefined, link("\u212Aate@example.com"), "kate@example.com")?.code).toBe("bad_address");
    // Nothing to compare with: no initiator, no list; recorded as given.
    expect(refusalOf(undefined, link("someone"), null)).toBeNull();
  });

  it("plus-addressing does not make the initiator someone else: their +tag is dropped on both sides before comparing", () => {
    const domain: DeciderPolicy = { ask: ["*@example.com"] };
    expect(refusalOf(domain, link("lead@example.com"), "lead+x@example.com")?.code).toBe("initiator");
    expect(refusalOf(domain, link("Lead+approvals@example.com"), "lead@example.com")?.code).toBe("initiator");
    expect(refusalOf(domain, link("lead+a@example.com"), "lead+b@example.com")?.code).toBe("initiator");
    // Another mailbox, or the same local part at another domain, is someone else.
    expect(refusalOf(domain, link("leader+x@example.com"), "lead@example.com")).toBeNull();
    expect(refusalOf({ ask: ["lead@example.com"] }, link("lead@example.com"), "lead+x@other.example.com")).toBeNull();
    expect(refusalOf({ ...domain, allowInitiator: true }, link("lead@example.com"), "lead+x@example.com")).toBeNull();
  });

  it("an initiator address that does not normalize (non-ASCII, trailing dot) refuses every person unless allow_initiator: fail closed", () => {
    for (const from of ["l\u00e9ad@example.com", "lead@example.com.", "lead@@example.com"]) {
      for (const trigger of [
        { kind: "email", from },
        { kind: "api", initiator: from },
        { kind: "fork", name: "r", at: "k", initiator: from },
      ]) {
        const initiator = initiatorOf(trigger);
        expect(initiator, from).toBe(UNREADABLE_INITIATOR);
        expect(refusalOf({ ask: ["*@example.com"] }, link("bob@example.com"), initiator)?.code).toBe("initiator");
        expect(refusalOf(undefined, link("bob@example.com"), initiator)?.code).toBe("initiator");
        expect(refusalOf({ ask: ["*@example.com"], allowInitiator: true }, link("bob@example.com"), initiator)).toBeNull();
        // The API token is no person: a list that names it still admits it.
        expect(refusalOf({ ask: ["api"] }, { email: null, via: "api" }, initiator)).toBeNull();
      }
    }
    expect(initiatorOf({ kind: "email", from: "Lead@Example.com" })).toBe("lead@example.com");
    expect(initiatorOf({ kind: "webhook", name: "w" })).toBeNull();
  });

  it("entries and addresses are bounded: over-long input is refused at once", () => {
    const long = `${"a".repeat(100_000)}@example.com`;
    const started = performance.now();
    expect(normalizeAddress(long)).toBeNull();
    expect(readDeciderEntry(`*@${"a.".repeat(50_000)}com`)).toMatchObject({ problem: expect.any(String) });
    expect(refusalOf(POLICY, link(long), null)?.code).toBe("bad_address");
    expect(performance.now() - started).toBeLessThan(50);
  });
});
