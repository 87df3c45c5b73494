import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryJournalStore, type MemoryStateBackend, scriptedModel, StorageError, type Model, type ModelRequest, type ScriptedReply } from "../../src/engine";
import { MAX_STEP_BYTES, stepBytes, utf8Bytes } from "../../src/engine/journal/bounds";
import { resolveParts, toBase64, type ResolvedPart } from "../../src/engine/model/content-parts";
import { writeBytes } from "../../src/engine/toolsets/kinds/files-disk";
import { callTree } from "../../src/engine/journal/call-tree";
import { ApprovalPage } from "../../src/views/approval-page";
import { RunPage } from "../../src/views/run-page";
import type { ApprovalView } from "../../src/runs/types";
import { ConnectionSlots, type Connections } from "../../src/engine/net/connection-slots";
import { deskRunView, fakeOpenAI, harness, workerFile } from "./helpers";

const ACCEPTS = `attachments: { max_files: 4, max_bytes: 5000000, types: ["image/*", "application/pdf", "text/*"] }`;

const reader = (model: string, extra = "") =>
  workerFile(`name: reader\ndescription: Reads what it is given\nmodel: ${model}\n${ACCEPTS}${extra}`, "Describe the attachments.");
const plain = workerFile(`name: plain\ndescription: Takes text only\nmodel: test:reader`);
const desk = workerFile(`
name: desk
model: test:caller
toolsets:
  docs: { use: files, root: /docs, scope: run }
  web: { use: http, allow: [img.example.com] }
  workers: [reader, plain]`);

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 250, 251]);
const PDF = new TextEncoder().encode("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n");

/** A callee model that reads its attachments as a real adapter would, and remembers them. */
function readingModel() {
  const seen: ResolvedPart[][] = [];
  const model: Model = {
    async request(req: ModelRequest) {
      const user = req.messages.find((m) => m.role === "user")!;
      seen.push(typeof user.content === "string" ? [{ type: "text", text: user.content }] : await resolveParts(user.content));
      return { text: "read them", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
  return { model, seen };
}

/** The caller calls `tool` with `args` once, then answers; the journal and the outcome come back. */
async function callOnce(
  args: Record<string, unknown>,
  opts: {
    tool?: string;
    readerModel?: string;
    files?: Record<string, [Uint8Array, string]>;
    extra?: Record<string, string>;
    calls?: ScriptedReply[];
    approvalMode?: "ask" | "approve_all";
    connections?: Connections;
  } = {},
) {
  const { model: callee, seen } = readingModel();
  const caller = scriptedModel(opts.calls ?? [{ toolCalls: [{ id: "c1", name: opts.tool ?? "reader", args }] }, { text: "done" }]);
  const h = harness(
    { "desk.worker": desk, "reader.worker": reader(opts.readerModel ?? "test:reader"), "plain.worker": plain, ...opts.extra },
    { models: { "test:caller": caller, "test:reader": callee } },
  );
  if (opts.connections) h.config.connections = opts.connections;
  const runId = `att-${crypto.randomUUID()}`;
  const disk = h.config.states!.open("run", runId, "~files");
  for (const [path, [bytes, type]] of Object.entries(opts.files ?? {})) await writeBytes(disk, path, bytes, type);
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "desk", input: { input: "go" }, runId, approvalMode: opts.approvalMode }, store);
  return { out, store, seen, h, runId, result: () => store.entries.get("desk/turn:1/tool:1/result") as { ok: boolean; error?: string; value?: unknown } };
}

afterEach(() => vi.restoreAllMocks());

describe("attachments", () => {
  it("only workers with attachments: get an attachments parameter", async () => {
    let tools: ModelRequest["tools"] = [];
    const caller = scriptedModel((req) => ((tools = req.tools), { text: "ok" }));
    const h = harness({ "desk.worker": desk, "reader.worker": reader("test:reader"), "plain.worker": plain }, { models: { "test:caller": caller } });
    await h.run({ worker: "desk", input: { input: "x" } });
    const params = (name: string) => tools.find((t) => t.name === name)!.parameters as { properties: Record<string, any> };
    expect(Object.keys(params("plain").properties)).toEqual(["input"]);
    expect(params("reader").properties.attachments).toMatchObject({ type: "array", maxItems: 4, items: { type: "string" } });
    // Passing some anyway to a worker that takes none is refused by its input schema.
    const { result } = await callOnce({ input: "x", attachments: ["docs:a.png"] }, { tool: "plain" });
    expect(result().ok).toBe(false);
  });

  it("the real openai client sends an image and a PDF from the caller's files as documented content parts", async () => {
    const fake = await fakeOpenAI(env.FAKE_OPENAI_URL, `attach-${crypto.randomUUID()}`, [{ text: "a cat and a report" }]);
    const caller = scriptedModel([
      { toolCalls: [{ id: "c1", name: "reader", args: { input: "what are these?", attachments: ["docs:shot.png", "/docs/report.pdf", "docs:notes.txt"] } }] },
      { text: "done" },
    ]);
    const h = harness(
      { "desk.worker": desk, "reader.worker": reader("openai:gpt-4.1-mini"), "plain.worker": plain },
      { models: { "test:caller": caller }, openai: { baseURL: fake.baseURL, apiKey: "sk-test" } },
    );
    const runId = `att-${crypto.randomUUID()}`;
    const disk = h.config.states!.open("run", runId, "~files");
    await writeBytes(disk, "/docs/shot.png", PNG, "image/png");
    await writeBytes(disk, "/docs/report.pdf", PDF, "application/pdf");
    await disk.put("file:/docs/notes.txt", "line one");
    const store = new MemoryJournalStore();
    expect(await h.run({ worker: "desk", input: { input: "go" }, runId }, store)).toMatchObject({ status: "succeeded" });

    const [first] = await fake.requests();
    expect(first.messages[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what are these?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(PNG)}` } },
        { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${toBase64(PDF)}` } },
        { type: "text", text: "Attachment notes.txt (text/plain):\nline one" },
      ],
    });
    // The journal keeps references, sizes and hashes — never the bytes.
    const journal = JSON.stringify([...store.entries]);
    expect(journal).not.toContain(toBase64(PNG));
    expect(journal).not.toContain(toBase64(PDF));
    expect(store.entries.get("desk/turn:1/tool:1/step:attachments")).toEqual([
      { ref: "docs:/docs/shot.png", name: "shot.png", type: "image/png", size: PNG.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { ref: "docs:/docs/report.pdf", name: "report.pdf", type: "application/pdf", size: PDF.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { ref: "docs:/docs/notes.txt", name: "notes.txt", type: "text/plain", size: 8, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
  });

  it("refuses a wrong type, too many files, too many bytes and a path outside the caller's roots, naming the limit", async () => {
    const files = { "/docs/a.png": [PNG, "image/png"], "/docs/x.zip": [PNG, "application/zip"] } as Record<string, [Uint8Array, string]>;
    const cases: Array<[string[], RegExp]> = [
      [
        ["docs:x.zip"],
        /attachment "docs:x\.zip" is application\/zip; reader accepts image\/\*, application\/pdf, text\/\* \(attachments\.types in reader\.worker\)/,
      ],
      [
        ["docs:a.png", "docs:a.png", "docs:a.png", "docs:a.png", "docs:a.png"],
        /reader takes at most 4 attachments per call \(attachments\.max_files in reader\.worker\); got 5/,
      ],
      [["docs:../secrets/key.png"], /uses "\.\."/],
      [["/etc/passwd"], /outside this toolset's root \/docs/],
      [["other:/a.png"], /desk has no files instance "other"/],
      [["docs:missing.png"], /no file at \/docs\/missing\.png/],
    ];
    for (const [refs, message] of cases) {
      const { result, seen } = await callOnce({ input: "x", attachments: refs }, { files });
      expect(result(), refs.join(",")).toMatchObject({ ok: false, error: expect.stringMatching(message) });
      expect(seen).toEqual([]);
    }
    const big = new Uint8Array(5_000_001);
    const { result } = await callOnce({ input: "x", attachments: ["docs:big.png"] }, { files: { "/docs/big.png": [big, "image/png"] } });
    expect(result().error).toMatch(
      /attachment "docs:big\.png" is 5000001 bytes; reader takes at most 5000000 bytes of attachments per call \(attachments\.max_bytes in reader\.worker\)/,
    );
  });

  it("refuses a URL on a host none of the caller's http instances may fetch, and plain http", async () => {
    const spy = vi.spyOn(globalThis, "fetch");
    const { result } = await callOnce({ input: "x", attachments: ["https://evil.example.net/cat.png"] });
    expect(result().error).toMatch(/host evil\.example\.net is not allowed by any http instance of desk \(web: img\.example\.com\)/);
    const insecure = await callOnce({ input: "x", attachments: ["http://img.example.com/cat.png"] });
    expect(insecure.result().error).toMatch(/only https URLs/);
    expect(spy).not.toHaveBeenCalled();
  });

  it("fetches an allowed https URL by the http rules: a redirect to another host is refused", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith("/cat.png")) return new Response(PNG, { headers: { "content-type": "image/png" } });
      return new Response(null, { status: 302, headers: { location: "https://evil.example.net/steal" } });
    });
    const ok = await callOnce({ input: "x", attachments: ["https://img.example.com/cat.png"] });
    expect(ok.result()).toMatchObject({ ok: true });
    expect(ok.seen[0]![1]).toEqual({ type: "image", mime: "image/png", base64: toBase64(PNG) });
    const redirected = await callOnce({ input: "x", attachments: ["https://img.example.com/go"] });
    expect(redirected.result().error).toMatch(/redirect 1 to https:\/\/evil\.example\.net\/steal refused/);
  });

  it("an attachment's URL is fetched in the activation's line for its connections", async () => {
    const fetched = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(PNG, { headers: { "content-type": "image/png" } }));
    const line = new ConnectionSlots(1);
    const busy = await line.acquire();
    const call = callOnce({ input: "x", attachments: ["https://img.example.com/cat.png"] }, { connections: line });
    await new Promise((r) => setTimeout(r, 50));
    expect(fetched).not.toHaveBeenCalled();
    busy.release();
    expect((await call).result()).toMatchObject({ ok: true });
    expect(fetched).toHaveBeenCalledTimes(1);
  });

  it("a GET that saves into files asks like a write (nothing is fetched or written before a decision)", async () => {
    const fetched = vi.spyOn(globalThis, "fetch");
    const { out } = await callOnce(
      {},
      {
        calls: [
          { toolCalls: [{ id: "c1", name: "web_fetch", args: { url: "https://img.example.com/cat.png", save_to: "docs:in/cat.png" } }] },
          { text: "done" },
        ],
      },
    );
    expect(out).toMatchObject({ status: "awaiting_approval", pending: [{ tool: "web_fetch", args: { save_to: "docs:in/cat.png" } }] });
    expect(fetched).not.toHaveBeenCalled();
  });

  it("an image fetched by http and saved to files round-trips as an attachment; the journal holds no bytes", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(PNG, { headers: { "content-type": "image/png" } }));
    const { out, result, seen, store } = await callOnce(
      {},
      {
        approvalMode: "approve_all",
        calls: [
          { toolCalls: [{ id: "c1", name: "web_fetch", args: { url: "https://img.example.com/cat.png", save_to: "docs:in/cat.png" } }] },
          { toolCalls: [{ id: "c2", name: "reader", args: { input: "look", attachments: ["docs:in/cat.png"] } }] },
          { text: "done" },
        ],
      },
    );
    expect(out).toMatchObject({ status: "succeeded" });
    expect(result()).toMatchObject({ ok: true, value: { status: 200, saved: { path: "docs:/docs/in/cat.png", type: "image/png", size: PNG.length } } });
    expect(seen[0]).toEqual([
      { type: "text", text: "look" },
      { type: "image", mime: "image/png", base64: toBase64(PNG) },
    ]);
    expect(JSON.stringify([...store.entries])).not.toContain(toBase64(PNG));
  });

  const RULE = '{ deny_when: { url: "https://img.example.com/leak.png?data=SECRET" }, otherwise: allow }';
  for (const policy of ["deny", "ask", "readonly", RULE] as const) {
    it(`never fetches an attachment URL through an http instance whose fetch is ${policy} (approval.web_fetch, readonly)`, async () => {
      const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(PNG, { headers: { "content-type": "image/png" } }));
      const guarded =
        policy === "readonly"
          ? desk.replace("allow: [img.example.com] }", "allow: [img.example.com], readonly: true }")
          : desk.replace("  workers: [reader, plain]", `  workers: [reader, plain]\napproval:\n  web_fetch: ${policy}`);
      expect(guarded).not.toBe(desk);
      const { result, seen } = await callOnce(
        { input: "x", attachments: ["https://img.example.com/leak.png?data=SECRET"] },
        { extra: { "desk.worker": guarded } },
      );
      const why = {
        deny: /approval\.web_fetch is deny in desk\.worker$/,
        ask: /approval\.web_fetch is ask in desk\.worker; fetch it with web_fetch and save_to \(which asks\), then attach the saved file$/,
        readonly: /http instance "web" is readonly \(it offers no web_fetch\)$/,
        // A GET of that URL is what the rule denies: the attachment is refused naming it.
        [RULE]: /approval\.web_fetch is deny in desk\.worker \(deny_when url = "https:\/\/img\.example\.com\/leak\.png\?data=SECRET"\)$/,
      }[policy];
      expect(result()).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^attachment "https:\/\/img\.example\.com\/leak\.png\?data=SECRET": desk may not fetch it unasked: /),
      });
      expect(result().error).toMatch(why);
      expect(spy).not.toHaveBeenCalled();
      expect(seen).toEqual([]);
    });
  }

  it("a 3 MB text download saved with save_to is kept in rows far under the row limit and reads back", async () => {
    const text = 'line of text, "quoted" \u0001 日本\n'.repeat(100_000);
    expect(utf8Bytes(text)).toBeGreaterThan(3_000_000);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(text, { headers: { "content-type": "text/plain; charset=utf-8" } }));
    const script: ScriptedReply[] = [
      { toolCalls: [{ id: "c1", name: "web_fetch", args: { url: "https://img.example.com/log.txt", save_to: "docs:log.txt" } }] },
      { toolCalls: [{ id: "c2", name: "docs_read_file", args: { path: "log.txt", offset: 2_000_000, max_chars: 50_000 } }] },
      { toolCalls: [{ id: "c3", name: "reader", args: { input: "look", attachments: ["docs:log.txt"] } }] },
      { text: "done" },
    ];
    // The rows as stored while the run holds the file (its state is cleared when it ends).
    let rows: Array<[string, number]> = [];
    const caller = scriptedModel((_req, n) => {
      if (n === 1) rows = [...states.rows].map(([k, v]) => [k, utf8Bytes(k) + utf8Bytes(v)]);
      return script[n]!;
    });
    const { model: callee, seen } = readingModel();
    const h = harness(
      { "desk.worker": desk, "reader.worker": reader("test:reader"), "plain.worker": plain },
      { models: { "test:caller": caller, "test:reader": callee } },
    );
    const states = h.config.states as MemoryStateBackend;
    const store = new MemoryJournalStore();
    expect(await h.run({ worker: "desk", input: { input: "go" }, approvalMode: "approve_all" }, store)).toMatchObject({ status: "succeeded" });
    const result = (id: string) => store.entries.get(`desk/turn:${id.slice(1)}/tool:1/result`);
    expect(result("c1")).toMatchObject({ ok: true, value: { saved: { path: "docs:/docs/log.txt", type: "text/plain", size: utf8Bytes(text) } } });
    expect(result("c2")).toMatchObject({ ok: true, value: { content: text.slice(2_000_000, 2_050_000), total_chars: text.length, truncated: true } });
    expect(seen[0]![1]).toEqual({ type: "text", text: `Attachment log.txt (text/plain):\n${text}` });
    expect(rows.length).toBeGreaterThan(10);
    for (const [key, bytes] of rows) expect(bytes, key).toBeLessThan(1_000_000);
  });

  it("a state store that cannot write the download stops the activation; the model never reads the storage error", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("hello", { headers: { "content-type": "text/plain" } }));
    const caller = scriptedModel([
      { toolCalls: [{ id: "c1", name: "web_fetch", args: { url: "https://img.example.com/a.txt", save_to: "docs:a.txt" } }] },
      { text: "done" },
    ]);
    const h = harness({ "desk.worker": desk, "reader.worker": reader("test:reader"), "plain.worker": plain }, { models: { "test:caller": caller } });
    const states = h.config.states as MemoryStateBackend;
    const open = states.open.bind(states);
    states.open = (scope, id, namespace) => ({
      ...open(scope, id, namespace),
      put: async (key) => {
        throw new StorageError(`toolset state could not write ${key}: SQLITE_TOOBIG`, true);
      },
    });
    const store = new MemoryJournalStore();
    await expect(h.run({ worker: "desk", input: { input: "go" }, approvalMode: "approve_all" }, store)).rejects.toBeInstanceOf(StorageError);
    expect(store.entries.has("desk/turn:1/tool:1/result")).toBe(false);
    expect(JSON.stringify([...store.entries])).not.toContain("SQLITE_TOOBIG");
  });

  it("a 5 MB attachment keeps every journal step and every state row within bounds", async () => {
    const big = new Uint8Array(5_000_000).map((_, i) => (i * 7) & 0xff);
    const { out, store, seen, h } = await callOnce({ input: "x", attachments: ["docs:big.pdf"] }, { files: { "/docs/big.pdf": [big, "application/pdf"] } });
    expect(out).toMatchObject({ status: "succeeded" });
    expect((seen[0]![1] as { base64: string }).base64).toBe(toBase64(big));
    for (const [key, value] of store.entries) expect(stepBytes(key, value), key).toBeLessThan(MAX_STEP_BYTES);
    for (const [key, value] of (h.config.states as unknown as { rows: Map<string, string> }).rows) expect(value.length, key).toBeLessThan(1_100_000);
  });

  it("replay reads the bytes again only when a model request needs them, and fails clearly if they changed", async () => {
    const files = { "/docs/a.png": [PNG, "image/png"] } as Record<string, [Uint8Array, string]>;
    // The callee asks to write a file (approval), so its second request happens after a pause.
    const asking = workerFile(`name: reader\nmodel: test:asker\n${ACCEPTS}\ntoolsets:\n  files: { use: files }`, "Read.");
    for (const change of [false, true]) {
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
      const caller = scriptedModel((_req, n) =>
        n === 0 ? { toolCalls: [{ id: "c1", name: "reader", args: { input: "x", attachments: ["docs:a.png"] } }] } : { text: "done" },
      );
      const h = harness({ "desk.worker": desk, "reader.worker": asking, "plain.worker": plain }, { models: { "test:caller": caller, "test:asker": asker } });
      const runId = `att-${crypto.randomUUID()}`;
      const disk = h.config.states!.open("run", runId, "~files");
      for (const [path, [bytes, type]] of Object.entries(files)) await writeBytes(disk, path, bytes, type);
      const store = new MemoryJournalStore();
      const first = await h.run({ worker: "desk", input: { input: "go" }, runId }, store);
      expect(first.status).toBe("awaiting_approval");
      expect(reads).toHaveLength(1);
      if (!change) await expectPagesShowAttachments(store, (first as { pending: Array<{ key: string }> }).pending[0]!.key);
      if (change) await writeBytes(disk, "/docs/a.png", new Uint8Array([1, 2, 3]), "image/png");
      const pending = (first as { pending: Array<{ key: string }> }).pending[0]!;
      await store.put(pending.key, { approved: true, by: "test" });
      const second = await h.run({ worker: "desk", input: { input: "go" }, runId }, store);
      if (!change) {
        expect(second).toMatchObject({ status: "succeeded" });
        expect(reads[1]![1]).toEqual({ type: "image", mime: "image/png", base64: toBase64(PNG) });
      } else {
        // Its own code, not a model failure: the run ends at once, naming the file.
        expect(second).toMatchObject({
          status: "failed",
          error: { code: "attachment_changed", message: expect.stringMatching(/^attachment "docs:\/docs\/a\.png" changed since it was given to reader/) },
        });
      }
    }
  });
});

/** The run page and the approval page of a call inside `reader` name the attachment, its type and size — never its bytes. */
async function expectPagesShowAttachments(store: MemoryJournalStore, approvalKey: string) {
  const tree = callTree(store.entries);
  expect(tree!.tools[0]!.attachments).toEqual([{ ref: "docs:/docs/a.png", name: "a.png", type: "image/png", size: PNG.length, sha256: expect.any(String) }]);
  const run = deskRunView(tree, { status: "awaiting_approval" });
  const approval = {
    id: "a",
    status: "pending",
    tool: "write_file",
    args: {},
    description: "",
    worker_chain: ["desk", "reader"],
    call_path: approvalKey.slice(0, -"/approval".length),
    notify: null,
    note: null,
    decided_by: null,
    created_at: 1,
    decided_at: null,
    expires_at: 2,
  } as ApprovalView;
  for (const page of [
    String(await RunPage({ run, events: "/runs/r/view/events" })),
    String(await ApprovalPage({ run, approval, action: "/x", runLink: "/r" })),
  ]) {
    expect(page).toContain("<code>a.png</code> (image/png, 21 B)");
    expect(page).not.toContain(toBase64(PNG));
  }
}
