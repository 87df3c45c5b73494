import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryJournalStore, scriptedModel, type Model } from "../../src/engine";
import { callTree } from "../../src/engine/journal/call-tree";
import { writeBytes } from "../../src/engine/toolsets/kinds/files-disk";
import { RunPage } from "../../src/views/run-page";
import { deskRunView, harness, workerFile } from "./helpers";

// One worker with one files instance `w` rooted at /w, an http instance that can save into
// it, and a worker it can attach files to: every way a path string enters the engine.
const desk = workerFile(`
name: desk
model: test:caller
toolsets:
  w: { use: files, root: /w, scope: run }
  web: { use: http, allow: [img.example.com] }
  workers: [reader]`);
const reader = workerFile(`name: reader\ndescription: Reads text\nmodel: test:reader\nattachments: { max_files: 2, max_bytes: 100000, types: ["text/*"] }`);
const quiet: Model = { request: async () => ({ text: "read", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } }) };

/** Each entry point given `ref`: the file it reached (absolute path) or its refusal. */
async function throughEveryEntry(ref: string) {
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("fetched", { headers: { "content-type": "text/plain" } }));
  const caller = scriptedModel([
    { toolCalls: [{ id: "read", name: "w_read_file", args: { path: ref } }] },
    { toolCalls: [{ id: "attach", name: "reader", args: { input: "look", attachments: [ref] } }] },
    { toolCalls: [{ id: "save", name: "web_fetch", args: { url: "https://img.example.com/n.txt", save_to: ref } }] },
    { text: "done" },
  ]);
  const h = harness({ "desk.worker": desk, "reader.worker": reader }, { models: { "test:caller": caller, "test:reader": quiet } });
  const runId = `paths-${crypto.randomUUID()}`;
  await writeBytes(h.config.states!.open("run", runId, "~files"), "/w/note.txt", new TextEncoder().encode("the note"), "text/plain");
  const store = new MemoryJournalStore();
  const out = await h.run({ worker: "desk", input: { input: "go" }, runId, approvalMode: "approve_all" }, store);
  expect(out.status).toBe("succeeded");
  const result = (id: string) =>
    store.entries.get(`desk/turn:${["read", "attach", "save"].indexOf(id) + 1}/tool:1/result`) as { ok: boolean; error?: string; value?: any };
  const tree = callTree(store.entries)!;
  const attached = tree.tools.find((t) => t.attachments?.length)?.attachments?.[0];
  const run = deskRunView(tree);
  const page = String(await RunPage({ run, events: "/runs/r/view/events" }));
  const outcome = (r: { ok: boolean; error?: string }, reached: () => string) => (r.ok ? reached() : `refused: ${r.error}`);
  return {
    read_file: outcome(result("read"), () => result("read").value.path),
    attachment: outcome(result("attach"), () => attached!.ref),
    save_to: outcome(result("save"), () => result("save").value.saved.path),
    page: page.match(/from <code>([^<]*)<\/code>/)?.[1] ?? "(no attachment shown)",
  };
}

afterEach(() => vi.restoreAllMocks());

describe("one path, one meaning (files tools, attachment references, save_to, run page)", () => {
  for (const ref of ["/w/note.txt", "note.txt", "w:/w/note.txt", "w:note.txt"]) {
    it(`${JSON.stringify(ref)} names /w/note.txt everywhere`, async () => {
      const seen = await throughEveryEntry(ref);
      expect(seen).toEqual({ read_file: "/w/note.txt", attachment: "w:/w/note.txt", save_to: "w:/w/note.txt", page: "w:/w/note.txt" });
    });
  }

  for (const [ref, refusal] of [
    ["/w/../x", /uses "\.\.": paths stay under the root \/w/],
    ["/other", /path "\/other" is outside this toolset's root \/w/],
    ["w:/note.txt", /path "\/note\.txt" is outside this toolset's root \/w/],
    ["note\0.txt", /path contains a NUL character/],
    ["v:note.txt", /has no files instance "v"/],
  ] as const) {
    it(`${JSON.stringify(ref)} is refused the same way by every entry point`, async () => {
      const seen = await throughEveryEntry(ref);
      for (const entry of ["read_file", "attachment", "save_to"] as const) expect(seen[entry], entry).toMatch(refusal);
      expect(seen.page).toBe("(no attachment shown)");
    });
  }
});
