import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryJournalStore, scriptedModel, type Model } from "../../src/engine";
import { resolveParts, type ResolvedPart } from "../../src/engine/model/content-parts";
import { fakeOpenAI, harness, workerFile } from "./helpers";

/** The `http` instance sends this key; the upstream echoes it back (tests/support/fake-upstream.ts `/echo`). */
const SECRET = 'zq-live "quoted" key/42';
const reader = workerFile(
  `name: reader\ndescription: Reads what it is given\nmodel: openai:gpt-4.1-mini\nattachments: { max_files: 2, max_bytes: 100000, types: ["application/json", "image/*"] }`,
  "Describe the attachments.",
);
const desk = workerFile(`
name: desk
model: test:caller
toolsets:
  web: { use: http, allow: [api.example.com], headers: { X-Api-Key: "\${API_KEY}", X-Region: "\${API_REGION}" } }
  workers: [reader]`);

/**
 * https://api.example.com/<id>/echo goes to the fake upstream's echo (attachments must be https;
 * the fake upstream is http on 127.0.0.1) with the headers the instance sent; /leak.png answers an
 * image/png whose bytes hold the key; /away redirects to a URL that carries it. Every other request (the fake OpenAI server) goes out as it is.
 */
function upstream() {
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    if (url.hostname !== "api.example.com") return real(req);
    if (url.pathname === "/away")
      return new Response(null, {
        status: 302,
        headers: { location: `https://evil.example.net/?k=${encodeURIComponent(req.headers.get("x-api-key") ?? "")}` },
      });
    if (url.pathname === "/leak.png")
      return new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, ...new TextEncoder().encode(req.headers.get("x-api-key") ?? ""), 0xfe]), {
        headers: { "content-type": "image/png" },
      });
    return real(`${env.FAKE_UPSTREAM_A}${url.pathname}`, { headers: req.headers });
  });
}

beforeEach(upstream);
afterEach(() => vi.restoreAllMocks());

async function attach(ref: string, vars: Record<string, string>, plainVars: string[] = []) {
  const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `att-secret-${crypto.randomUUID()}`, [{ text: "read it" }]);
  const caller = scriptedModel([{ toolCalls: [{ id: "c1", name: "reader", args: { input: "what is this?", attachments: [ref] } }] }, { text: "done" }]);
  const h = harness(
    { "desk.worker": desk, "reader.worker": reader },
    { models: { "test:caller": caller }, openai: { baseURL: fake.baseURL, apiKey: "sk-test" } },
  );
  h.config.vars = vars;
  h.config.plainVars = plainVars;
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "desk", input: { input: "go" } }, store);
  return { out, store, sent: JSON.stringify(await fake.requests()) };
}

describe("an attachment fetched through an http instance", () => {
  it("reaches the callee's model with the instance's echoed secret redacted (raw and JSON-escaped)", async () => {
    const { out, sent } = await attach(`https://api.example.com/att-${crypto.randomUUID()}/echo`, { API_KEY: SECRET, API_REGION: "eu-west-region" });
    expect(out).toMatchObject({ status: "succeeded" });
    expect(sent).toContain("Attachment echo (application/json)");
    expect(sent).toContain("[redacted:API_KEY]");
    expect(sent).not.toContain("zq-live");
    // API_REGION is not a plain var here (plainVars empty): a secret too.
    expect(sent).toContain("[redacted:API_REGION]");
  });

  it("shows a plain var's value (plainVars), but not when a secret has the same value", async () => {
    const shown = await attach(`https://api.example.com/att-${crypto.randomUUID()}/echo`, { API_KEY: SECRET, API_REGION: "eu-west-region" }, ["API_REGION"]);
    expect(shown.sent).toContain("eu-west-region");
    expect(shown.sent).not.toContain("[redacted:API_REGION]");
    const same = await attach(
      `https://api.example.com/att-${crypto.randomUUID()}/echo`,
      { API_KEY: SECRET, API_REGION: "eu-west-region", OTHER_SECRET: "eu-west-region" },
      ["API_REGION"],
    );
    expect(same.sent).not.toContain("eu-west-region");
    expect(same.sent).toContain("[redacted:API_REGION]");
  });

  it("is refused, naming the var, when it is binary and holds the secret (bytes of an image cannot be edited)", async () => {
    const { out, store, sent } = await attach("https://api.example.com/leak.png", { API_KEY: SECRET, API_REGION: "eu-west-region" });
    expect(out).toMatchObject({ status: "succeeded" });
    expect(store.entries.get("desk/turn:1/tool:1/result")).toMatchObject({
      ok: false,
      error: 'attachment "https://api.example.com/leak.png" (image/png) holds the value of API_KEY, a secret its http instance sends; it is not attached',
    });
    expect(sent).toBe("[]");
    expect(JSON.stringify([...store.entries])).not.toContain("zq-live");
  });

  it("that fails on a redirect quoting the secret names the redirect without it", async () => {
    const { store, sent } = await attach("https://api.example.com/away", { API_KEY: SECRET, API_REGION: "eu-west-region" });
    expect(store.entries.get("desk/turn:1/tool:1/result")).toMatchObject({
      ok: false,
      error: expect.stringContaining("https://evil.example.net/?k=[redacted:API_KEY]"),
    });
    expect(JSON.stringify([...store.entries])).not.toContain("zq-live");
    expect(sent).toBe("[]");
  });

  it("is read again on a replay whose model request is not recorded: redacted the same way, though the raw body is longer than the recorded one", async () => {
    // The callee writes a file (an approval) first, so its second request comes after a pause and reads the attachment again.
    const asking = workerFile(
      `name: reader\nmodel: test:asker\nattachments: { max_files: 2, max_bytes: 100000, types: ["application/json"] }\ntoolsets:\n  files: { use: files }`,
      "Read.",
    );
    const reads: ResolvedPart[][] = [];
    const asker: Model = {
      async request(req) {
        const user = req.messages.find((m) => m.role === "user")!;
        reads.push(typeof user.content === "string" ? [] : await resolveParts(user.content));
        const wrote = req.messages.some((m) => m.role === "tool");
        return wrote
          ? { text: "ok", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } }
          : { text: null, toolCalls: [{ id: "w", name: "write_file", arguments: '{"path":"x","content":"y"}' }], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const ref = `https://api.example.com/att-${crypto.randomUUID()}/echo`;
    const caller = scriptedModel((_req, n) =>
      n === 0 ? { toolCalls: [{ id: "c1", name: "reader", args: { input: "x", attachments: [ref] } }] } : { text: "done" },
    );
    const h = harness({ "desk.worker": desk, "reader.worker": asking }, { models: { "test:caller": caller, "test:asker": asker } });
    h.config.vars = { API_KEY: SECRET, API_REGION: "eu-west-region" };
    h.config.plainVars = ["API_REGION"];
    const store = new MemoryJournalStore();
    const first = await h.run({ worker: "desk", input: { input: "go" }, runId: "att-replay" }, store);
    expect(first.status).toBe("awaiting_approval");
    await store.put((first as { pending: Array<{ key: string }> }).pending[0]!.key, { approved: true, by: "test" });
    expect(await h.run({ worker: "desk", input: { input: "go" }, runId: "att-replay" }, store)).toMatchObject({ status: "succeeded" });
    expect(reads).toHaveLength(2);
    expect(reads[1]).toEqual(reads[0]);
    expect(JSON.stringify(reads)).toContain("[redacted:API_KEY]");
    expect(JSON.stringify(reads)).not.toContain("zq-live");
  });

  it("save_to: a response echoing the instance's secret is saved redacted (text) or not at all (binary), naming the var", async () => {
    const saver = workerFile(`
name: saver
model: test:saver
toolsets:
  web: { use: http, allow: [api.example.com], headers: { X-Api-Key: "\${API_KEY}" } }
  files: { use: files }`);
    const echo = `https://api.example.com/save-${crypto.randomUUID()}/echo`;
    const seen: string[] = [];
    const model = scriptedModel((req, n) => {
      seen.push(JSON.stringify(req.messages.filter((m) => m.role === "tool")));
      if (n === 0)
        return {
          toolCalls: [
            { name: "web_fetch", args: { url: echo, save_to: "echo.json" } },
            { name: "web_fetch", args: { url: "https://api.example.com/leak.png", save_to: "leak.png" } },
          ],
        };
      if (n === 1)
        return {
          toolCalls: [
            { name: "read_file", args: { path: "echo.json" } },
            { name: "read_file", args: { path: "leak.png" } },
          ],
        };
      return { text: "done" };
    });
    const h = harness({ "saver.worker": saver }, { models: { "test:saver": model } });
    h.config.vars = { API_KEY: SECRET };
    const out = await h.run({ worker: "saver", input: { input: "go" }, approvalMode: "approve_all" }, new MemoryJournalStore());
    expect(out.status).toBe("succeeded");
    const results = seen.at(-1)!;
    // The echoed request headers were saved, with the key redacted; the image holding it was refused.
    expect(results).toContain("[redacted:API_KEY]");
    expect(results).toContain("nothing saved to /leak.png: the response holds the value of API_KEY, a secret this http instance sends");
    expect(results).not.toContain("zq-live");
  });
});
