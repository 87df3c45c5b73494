import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doctor } from "../../cli/doctor.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A project folder: the scaffolded template's wrangler.toml and workers/ (this repository's), plus `files`. */
function project(files: Record<string, string> = {}, wrangler?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "edgework-doctor-"));
  made.push(dir);
  cpSync(join(root, "workers"), join(dir, "workers"), { recursive: true });
  writeFileSync(join(dir, "wrangler.toml"), wrangler ?? readFileSync(join(root, "create-edgework/template/wrangler.toml"), "utf8"));
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  return dir;
}

/** The template's configuration, completed as a first deploy needs it. */
const complete = (extra = "") =>
  readFileSync(join(root, "create-edgework/template/wrangler.toml"), "utf8")
    .replace("# workers_dev = false", "workers_dev = false")
    .replace("# preview_urls = false", "preview_urls = false")
    .replace(
      'DEFAULT_MODEL = "openai:gpt-4.1-mini"',
      `DEFAULT_MODEL = "openai:gpt-4.1-mini"\nAPPROVAL_FROM = "agents@mail.example.com"\nPUBLIC_URL = "https://agents.example.com"\nAPPROVER_EMAIL = "ann@example.com"${extra}`,
    );

/** A fake Cloudflare API on 127.0.0.1: `state` says what the account has. */
const state: { verified: string[]; queues: string[]; secrets: string[]; sending: string[]; seen: string[] } = {
  verified: ["ann@example.com"],
  queues: ["my-edgework-app-model-requests"],
  secrets: ["API_TOKEN", "APPROVAL_SECRET", "GITHUB_WEBHOOK_SECRET", "OPENAI_API_KEY"],
  sending: [],
  seen: [] as string[],
};
let server: Server;
let apiBase = "";
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url!, "http://x");
    state.seen.push(`${req.headers.authorization} ${url.pathname}`);
    const ok = (result: unknown) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ success: true, result, result_info: { total_pages: 1 } }));
    if (url.pathname === "/accounts") return ok([{ id: "acc1" }]);
    if (url.pathname === "/accounts/acc1/email/routing/addresses")
      return ok([...state.verified.map((email) => ({ email, verified: "2026-01-01T00:00:00Z" })), { email: "bob@example.com", verified: null }]);
    if (url.pathname === "/accounts/acc1/queues") return ok(state.queues.map((queue_name) => ({ queue_name })));
    if (url.pathname === "/accounts/acc1/workers/scripts/my-edgework-app/secrets") return ok(state.secrets.map((name) => ({ name, type: "secret_text" })));
    if (url.pathname === "/zones") return ok(url.searchParams.get("name") === "example.com" ? [{ id: "zone1", name: "example.com" }] : []);
    if (url.pathname === "/zones/zone1/email/sending/subdomains") return ok(state.sending.map((name) => ({ name })));
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ success: false, errors: [{ message: "no route" }] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

type Report = { lines: string[]; problems: { what: string; fix: string }[] };
const run = (dir: string, args: string[] = []): Promise<Report> => doctor({ project: dir, args, env: {} });
const whats = (r: Report) => r.problems.map((p) => p.what).join("\n");

// Loading wrangler's configuration reader takes seconds on a busy machine.
describe("edgework doctor", { timeout: 30_000 }, () => {
  it("on the scaffolded project lists what a first deploy lacks, each with its fix, and what it could not check without a token", async () => {
    const r = await run(project({ ".dev.vars": "API_TOKEN=dev-token-value\nOPENAI_API_KEY=sk-secret-value\n" }));
    expect(whats(r)).toMatch(/APPROVAL_FROM is not set/);
    expect(whats(r)).toMatch(/PUBLIC_URL is not set/);
    expect(whats(r)).toMatch(/workers_dev is not false/);
    expect(whats(r)).toMatch(/preview_urls is not false/);
    expect(r.problems.every((p) => p.fix.length > 0)).toBe(true);
    const text = r.lines.join("\n");
    expect(text).toMatch(/not checked without a token/);
    expect(text).toMatch(/secrets \(npx wrangler secret put NAME\): API_TOKEN, APPROVAL_SECRET, OPENAI_API_KEY, GITHUB_WEBHOOK_SECRET$/m);
    expect(text).toMatch(/that queue my-edgework-app-model-requests exists/);
    // .dev.vars names are read, never its values.
    expect(text).not.toMatch(/dev-token-value|sk-secret-value/);
    expect(text).toMatch(/problems production will refuse or lack\.$/);
    // The template states its CPU limit, and its Durable Objects and queue are complete.
    expect(whats(r)).not.toMatch(/cpu_ms|Durable Object|migration|MODEL_QUEUE|consumer/);
  });

  it("on a complete configuration, with the account confirming it, says so", async () => {
    const r = await run(project({}, complete()), ["--token", "t0k", "--api-base", apiBase]);
    expect(r.problems).toEqual([]);
    expect(r.lines.at(-1)).toBe("No problem found: this configuration has what a deploy needs.");
    expect(r.lines[0]).toMatch(/with the account/);
    expect(state.seen.every((s) => s.startsWith("Bearer t0k "))).toBe(true);
  });

  it("finds what the account lacks: an unverified approver, a missing queue or secret, a conversation without Email Sending", async () => {
    const saved = { ...state };
    state.verified = [];
    state.queues = [];
    state.secrets = ["API_TOKEN"];
    try {
      const dir = project({ ".dev.vars": "STRIPE_KEY=x\n" }, complete());
      writeFileSync(
        join(dir, "workers/triggers.yaml"),
        `${readFileSync(join(dir, "workers/triggers.yaml"), "utf8")}\nsupport:\n  worker: triage\n  email: { to: "support@agents.example.com", allow_from: ["*@example.com"], reply: true }\n`,
      );
      const r = await run(dir, ["--token", "t0k", "--api-base", apiBase]);
      expect(whats(r)).toMatch(
        /ann@example\.com \(\[vars\] APPROVER_EMAIL\) is not a verified Email Routing destination address, and mail\.example\.com is not onboarded to Email Sending/,
      );
      expect(whats(r)).toMatch(/queue my-edgework-app-model-requests does not exist in the account/);
      expect(whats(r)).toMatch(/secret APPROVAL_SECRET \(edgework\) is not set on the deployed Worker/);
      expect(whats(r)).toMatch(/secret STRIPE_KEY \(\.dev\.vars\) is not set/);
      expect(whats(r)).toMatch(/email trigger support \(reply: true\) answers whoever writes in/);
      // Onboarded to Email Sending: any recipient is mailed, conversations included.
      state.sending = ["mail.example.com"];
      const onboarded = await run(dir, ["--token", "t0k", "--api-base", apiBase]);
      expect(whats(onboarded)).not.toMatch(/verified|reply: true/);
    } finally {
      Object.assign(state, saved);
    }
  });

  it("reads the binding's allowed_destination_addresses, wrangler.jsonc, a missing nodejs_compat, Durable Objects and the queue consumer", async () => {
    const narrowed = complete().replace(
      '[[send_email]]\nname = "APPROVAL_EMAIL"',
      '[[send_email]]\nname = "APPROVAL_EMAIL"\nallowed_destination_addresses = ["bob@example.com"]',
    );
    expect(whats(await run(project({}, narrowed)))).toMatch(
      /ann@example\.com \(\[vars\] APPROVER_EMAIL\) is not in APPROVAL_EMAIL's allowed_destination_addresses/,
    );
    const dir = project();
    rmSync(join(dir, "wrangler.toml"));
    writeFileSync(
      join(dir, "wrangler.jsonc"),
      `// a JSON configuration\n{ "name": "j", "main": "src/index.ts", "durable_objects": { "bindings": [{ "name": "RUNS", "class_name": "RunDO" }] },
        "migrations": [{ "tag": "v1", "new_classes": ["RunDO"] }], "queues": { "producers": [{ "binding": "MODEL_QUEUE", "queue": "q" }] } }`,
    );
    const r = await run(dir);
    expect(r.lines[0]).toMatch(/wrangler\.jsonc \(j\)/);
    expect(whats(r)).toMatch(/compatibility_flags lacks nodejs_compat/);
    expect(whats(r)).toMatch(/no compatibility_date/);
    expect(whats(r)).toMatch(/\[limits\] cpu_ms is not set/);
    expect(whats(r)).toMatch(/class RunDO is created by new_classes/);
    expect(whats(r)).toMatch(/no Durable Object binding WAIT_INDEX \(class WaitIndexDO\)/);
    expect(whats(r)).toMatch(/queue q has a producer and no consumer/);
    expect(whats(r)).toMatch(/no send_email binding APPROVAL_EMAIL/);
  });

  it("advises against Email Routing on an apex domain; a folder without configuration is one problem", async () => {
    const dir = project({}, complete('\nAPPROVAL_REPLY_DOMAIN = "example.com"'));
    expect((await run(dir)).lines.join("\n")).toMatch(
      /APPROVAL_REPLY_DOMAIN receives mail on example\.com, an apex domain: enabling Email Routing there replaces its MX records/,
    );
    const empty = mkdtempSync(join(tmpdir(), "edgework-doctor-"));
    made.push(empty);
    expect(whats(await run(empty))).toMatch(/no wrangler\.toml, wrangler\.json or wrangler\.jsonc/);
  });
});
