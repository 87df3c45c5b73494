import { describe, expect, it } from "vitest";
import { parseYaml } from "../../src/build/yaml";
import { loadApp } from "../../src/catalog";
import { cronMismatches, cronsInWranglerToml } from "../../src/triggers/wrangler-crons";
import { addressAllowed } from "../../src/triggers/email-address";

const WORKERS = {
  "workers/digest.worker": `---
name: digest
input: { type: object, properties: { since_hours: { type: integer }, at: { type: string } }, required: [since_hours] }
---
Digest.`,
  "workers/support.worker": `---
name: support
input: { type: object, properties: { from: { type: string }, subject: { type: string }, text: { type: string } }, required: [from, text] }
---
Support.`,
  "workers/plain.worker": `---
name: plain
---
Default input.`,
};

/** The problems `loadApp` reports for one triggers.yaml beside the workers above ([] when it loads). */
function problems(yaml: string): string[] {
  try {
    loadApp({ ...WORKERS, "workers/triggers.yaml": yaml }, parseYaml);
    return [];
  } catch (err) {
    return (err as Error).message
      .split("\n")
      .slice(1)
      .map((l) => l.trim());
  }
}

describe("triggers.yaml: scheduled and email kinds", () => {
  it("loads the examples of docs/triggers.md", () => {
    const app = loadApp(
      {
        ...WORKERS,
        "workers/triggers.yaml": `
nightly-digest:
  worker: digest
  schedule: "0 6 * * *"
  input: { since_hours: 24, at: "{{scheduled_time}}" }
support-mail:
  worker: support
  email: { to: "support@example.com", allow_from: ["*@example.com"] }
`,
      },
      parseYaml,
    );
    expect(app.schedules.get("nightly-digest")).toMatchObject({ worker: "digest", schedule: "0 6 * * *", input: { since_hours: 24 } });
    expect(app.emails.get("support-mail")).toMatchObject({
      email: { to: "support@example.com", allow_from: ["*@example.com"], max_bytes: 1048576, reply: false, require_dmarc: false },
    });
    expect(app.triggers.size).toBe(0);
  });

  it("a bad cron expression is refused naming file, trigger and reason", () => {
    expect(problems(`a: { worker: digest, schedule: "0 6 * *", input: { since_hours: 1 } }`)).toEqual([
      'workers/triggers.yaml: a.schedule: must be five fields separated by single spaces: minute hour day-of-month month day-of-week (e.g. "0 6 * * *")',
    ]);
    expect(problems(`a: { worker: digest, schedule: "61 6 * * *", input: { since_hours: 1 } }`)[0]).toMatch(
      /^workers\/triggers\.yaml: a\.schedule: is not a valid cron expression: /,
    );
    expect(problems(`a: { worker: digest, schedule: "0 0 6 * * *", input: { since_hours: 1 } }`)[0]).toMatch(/a\.schedule: must be five fields/);
    expect(problems(`a: { worker: digest, schedule: "@daily", input: { since_hours: 1 } }`)[0]).toMatch(/a\.schedule: must be five fields/);
    expect(problems(`a: { worker: digest, schedule: "*/15 9-17 * * MON-FRI", input: { since_hours: 1 } }`)).toEqual([]);
  });

  it("a scheduled input that does not fit the worker is refused when the catalog loads", () => {
    expect(problems(`a: { worker: digest, schedule: "0 6 * * *", input: { since_hours: "{{scheduled_time}}" } }`)[0]).toMatch(
      /^workers\/triggers\.yaml: a\.input: the input does not match the input schema of worker "digest" \(workers\/digest\.worker\): since_hours: /,
    );
  });

  it("a trigger is exactly one of webhook, schedule, email or slack", () => {
    expect(problems(`a: { worker: digest, schedule: "0 6 * * *", email: { to: a@b.c, allow_from: ["*@b.c"] } }`)).toEqual([
      "workers/triggers.yaml: a: a trigger has exactly one of verify (webhook), schedule, email or slack; this one has schedule and email",
    ]);
    expect(problems(`a: { worker: digest }`)).toEqual([
      "workers/triggers.yaml: a: a trigger has exactly one of verify (webhook), schedule, email or slack; this one has none",
    ]);
  });

  it("slack triggers: a /command and channel ids, a worker that takes a string, one trigger per command", () => {
    expect(problems(`a: { worker: plain, slack: { command: /ask, channels: [C0123ABCD] } }`)).toEqual([]);
    expect(problems(`a: { worker: plain, slack: { command: ask } }`)[0]).toMatch(/^workers\/triggers\.yaml: a\.slack\.command: must be a slash command/);
    expect(problems(`a: { worker: plain, slack: { command: "/${"a".repeat(32)}" } }`)[0]).toMatch(/a\.slack\.command/);
    expect(problems(`a: { worker: plain, slack: { command: /ask, channels: ["#ops"] } }`)[0]).toMatch(/a\.slack\.channels\.0: must be a channel id/);
    expect(problems(`a: { worker: plain, slack: { command: /ask, reply: true } }`)[0]).toMatch(/a\.slack\.reply: unknown key/);
    expect(problems(`a: { worker: digest, slack: { command: /ask } }`)[0]).toMatch(
      /^workers\/triggers\.yaml: a\.worker: a slash command's text \(a string\) does not match the input schema of worker "digest"/,
    );
    expect(problems(`a: { worker: plain, slack: { command: /ask } }\nb: { worker: plain, slack: { command: /ask } }`)).toEqual([
      'workers/triggers.yaml: b.slack.command: /ask is already the command of trigger "a"',
    ]);
  });

  it("email addresses and allow_from entries are checked; a worker must accept a message's input; one trigger per address", () => {
    expect(problems(`a: { worker: support, email: { to: "*@example.com", allow_from: ["*@example.com"] } }`)[0]).toMatch(/a\.email\.to: must be one address/);
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: ["a*@example.com", "*.example.com"] } }`)).toEqual([
      'workers/triggers.yaml: a.email.allow_from.0: entries are an address or "*@domain"',
      'workers/triggers.yaml: a.email.allow_from.1: entries are an address or "*@domain"',
    ]);
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: [] } }`)[0]).toMatch(/a\.email\.allow_from: /);
    expect(problems(`a: { worker: plain, email: { to: "s@example.com", allow_from: ["*@example.com"] } }`)[0]).toMatch(
      /^workers\/triggers\.yaml: a\.worker: a message's input \(\{from, to, subject, text, message_id, attachments\}\) does not match the input schema of worker "plain"/,
    );
    expect(
      problems(
        `a: { worker: support, email: { to: "S@example.com", allow_from: ["*@example.com"] } }\nb: { worker: support, email: { to: "s@example.com", allow_from: ["*@example.com"] } }`,
      ),
    ).toEqual(['workers/triggers.yaml: b.email.to: s@example.com is already the address of trigger "a"']);
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: ["*@example.com"], reply: "yes" } }`)[0]).toMatch(
      /^workers\/triggers\.yaml: a\.email\.reply: /,
    );
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: ["*@example.com"], reply: true } }`)).toEqual([]);
  });

  it("max_bytes is capped at 10 MiB (a message is parsed whole, attachments decoded, within 128 MB); require_dmarc is a boolean", () => {
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: ["*@example.com"], max_bytes: 26214400 } }`)).toEqual([
      "workers/triggers.yaml: a.email.max_bytes: at most 10485760 (10 MiB): a message is parsed in memory, attachments and all, within the Worker's 128 MB",
    ]);
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: ["*@example.com"], max_bytes: 10485760, require_dmarc: true } }`)).toEqual(
      [],
    );
    expect(problems(`a: { worker: support, email: { to: "s@example.com", allow_from: ["*@example.com"], require_dmarc: "yes" } }`)[0]).toMatch(
      /^workers\/triggers\.yaml: a\.email\.require_dmarc: /,
    );
  });
});

describe("allow_from matching", () => {
  it("compares whole addresses or whole domains, case-insensitively, never as a pattern", () => {
    const allow = ["*@example.com", "Partner@Other.test"];
    expect(addressAllowed(allow, "ann@example.com")).toBe(true);
    expect(addressAllowed(allow, "ANN@EXAMPLE.COM")).toBe(true);
    expect(addressAllowed(allow, "partner@other.test")).toBe(true);
    for (const no of ["ann@sub.example.com", "ann@example.com.evil", "example.com", "@example.com", "other@other.test", "ann@notexample.com", ""]) {
      expect(addressAllowed(allow, no), no).toBe(false);
    }
  });
});

describe("the build's cron check (edgework build and check, cli/catalog.mjs)", () => {
  it("reads wrangler.toml's [triggers] crons: quotes, comments, several lines; none without the table", () => {
    const toml = `name = "x"
[vars]
crons = ["not these"]

[triggers] # schedules
crons = [
  "0 6 * * *",   # nightly
  '*/15 * * * *',
]

[[durable_objects.bindings]]
name = "RUNS"
`;
    expect(cronsInWranglerToml(toml)).toEqual(["0 6 * * *", "*/15 * * * *"]);
    expect(cronsInWranglerToml(`name = "x"\n[vars]\nA = "1"\n`)).toEqual([]);
    expect(() => cronsInWranglerToml(`[triggers]\ncrons = ["0 6 * * *"`)).toThrow(/not closed/);
    expect(() => cronsInWranglerToml(`[triggers]\ncrons = [0]`)).toThrow(/unexpected "0"/);
  });

  it("refuses a mismatch, naming each expression and the triggers that use it", () => {
    const used = [
      { name: "nightly", schedule: "0 6 * * *" },
      { name: "nightly-short", schedule: "0 6 * * *" },
      { name: "hourly", schedule: "0 * * * *" },
    ];
    expect(cronMismatches(used, ["0 6 * * *", "0 * * * *"])).toEqual([]);
    expect(cronMismatches(used, ["0 6 * * *", "*/5 * * * *"])).toEqual([
      `"0 * * * *" (trigger hourly) is not in wrangler.toml's [triggers] crons: add it, or it never fires`,
      `"*/5 * * * *" is in wrangler.toml's [triggers] crons but no trigger in triggers.yaml uses it: remove it`,
    ]);
    expect(cronMismatches(used, [])).toEqual([
      `"0 6 * * *" (trigger nightly, nightly-short) is not in wrangler.toml's [triggers] crons: add it, or it never fires`,
      `"0 * * * *" (trigger hourly) is not in wrangler.toml's [triggers] crons: add it, or it never fires`,
    ]);
    // Cloudflare hands the scheduled() handler the string as listed: "0  6 * * *" would be another expression.
    expect(cronMismatches([{ name: "n", schedule: "0 6 * * *" }], ["0  6 * * *"])).toHaveLength(2);
  });
});
