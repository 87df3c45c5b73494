import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CatalogError, defineToolset, MemoryJournalStore, scriptedModel, tool, type ScriptedReply } from "../../src/engine";
import { MAX_GLOB_LENGTH } from "../../src/engine/glob";
import { confine } from "../../src/engine/toolsets/kinds/files";
import { harness, workerFile } from "./helpers";

const twoRoots = workerFile(`
name: editor
model: test:editor
toolsets:
  src: { use: files, root: /src }
  docs: { use: files, root: /docs }
approval:
  src_write_file: allow
  docs_write_file: allow`);

/** Replies with the given tool calls, one turn each, then a final text. */
const turns = (...calls: Array<ScriptedReply["toolCalls"]>) => scriptedModel([...calls.map((toolCalls) => ({ toolCalls })), { text: "done" }]);

describe("files kind", () => {
  it("two instances of one kind work each under their own root, with prefixed tool names", async () => {
    let seenTools: string[] = [];
    const model = scriptedModel((req, n) => {
      seenTools = req.tools.map((t) => t.name);
      const script: ScriptedReply[] = [
        { toolCalls: [{ name: "src_write_file", args: { path: "main.ts", content: "code" } }, { name: "docs_write_file", args: { path: "guide.md", content: "prose" } }] },
        { toolCalls: [{ name: "src_read_file", args: { path: "main.ts" } }, { name: "docs_read_file", args: { path: "/docs/guide.md" } }, { name: "docs_read_file", args: { path: "main.ts" } }, { name: "src_list_files", args: {} }] },
        { text: "done" },
      ];
      return script[n]!;
    });
    const h = harness({ "editor.worker": twoRoots }, { models: { "test:editor": model } });
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "editor", input: { input: "edit" } }, store);
    expect(out.status).toBe("succeeded");
    expect(seenTools.sort()).toEqual(
      ["delete_file", "list_files", "read_file", "write_file"].flatMap((t) => [`docs_${t}`, `src_${t}`]).sort(),
    );
    const result = (n: number) => store.entries.get(`editor/turn:2/tool:call_2_${n}/result`);
    const byCall = [1, 2, 3, 4].map(result);
    expect(byCall[0]).toMatchObject({ ok: true, value: { path: "/src/main.ts", content: "code" } });
    expect(byCall[1]).toMatchObject({ ok: true, value: { path: "/docs/guide.md", content: "prose" } });
    expect(byCall[2]).toMatchObject({ ok: false, error: "no file at /docs/main.ts" });
    expect(byCall[3]).toMatchObject({ ok: true, value: [{ path: "main.ts", size: 4 }] });
  });

  it("confines paths under the root: .., absolute escapes and NUL are refused", () => {
    expect(confine("/src", "a/b.txt")).toBe("/src/a/b.txt");
    expect(confine("/src", "/src/a.txt")).toBe("/src/a.txt");
    expect(confine("/", "x/./y")).toBe("/x/y");
    expect(() => confine("/src", "../docs/a.txt")).toThrow(/uses "\.\."/);
    expect(() => confine("/src", "a/../../etc")).toThrow(/uses "\.\."/);
    expect(() => confine("/src", "/docs/a.txt")).toThrow(/outside this toolset's root \/src/);
    expect(() => confine("/src", "/srcx/a.txt")).toThrow(/outside/);
    expect(() => confine("/src", "a\0b")).toThrow(/NUL/);
    expect(() => confine("/src", "/src")).toThrow(/root itself/);
  });

  it("reads long files in pieces and says when it truncated", async () => {
    const model = turns(
      [{ name: "write_file", args: { path: "big.txt", content: "abcdefghij" } }],
      [{ name: "read_file", args: { path: "big.txt", offset: 2, max_chars: 3 } }],
    );
    const h = harness({ "w.worker": workerFile(`
name: w
model: test:m
toolsets:
  files: { use: files }
approval:
  write_file: allow`) }, { models: { "test:m": model } });
    const store = new MemoryJournalStore();
    await h.run({ worker: "w", input: { input: "x" } }, store);
    const read = store.entries.get("w/turn:2/tool:call_2_1/result");
    expect(read).toMatchObject({ ok: true, value: { content: "cde", offset: 2, total_chars: 10, truncated: true } });
  });

  it("list_files with a model's pathological glob returns, and an over-long glob is a tool error naming the limit", async () => {
    const deep = "a/".repeat(500) + "x.md"; // 1004 characters, no "b"
    const model = turns(
      [{ name: "write_file", args: { path: deep, content: "deep" } }, { name: "write_file", args: { path: "notes/b", content: "b" } }],
      [{ name: "list_files", args: { glob: "**".repeat(14) + "b" } }, { name: "list_files", args: { glob: "**/".repeat(14) + "b" } }],
      [{ name: "list_files", args: { glob: "*".repeat(MAX_GLOB_LENGTH + 1) } }, { name: "list_files", args: { glob: "**/*.md" } }],
    );
    const h = harness({ "w.worker": workerFile(`
name: w
model: test:m
toolsets:
  files: { use: files }
approval:
  write_file: allow`) }, { models: { "test:m": model } });
    const store = new MemoryJournalStore();
    expect((await h.run({ worker: "w", input: { input: "x" } }, store)).status).toBe("succeeded");
    const result = (turn: number, n: number) => store.entries.get(`w/turn:${turn}/tool:call_${turn}_${n}/result`);
    expect(result(2, 1)).toMatchObject({ ok: true, value: [{ path: "notes/b", size: 1 }] });
    expect(result(2, 2)).toMatchObject({ ok: true, value: [{ path: "notes/b", size: 1 }] });
    expect(result(3, 1)).toMatchObject({ ok: false, error: `invalid arguments for list_files: glob: at most ${MAX_GLOB_LENGTH} characters` });
    expect(result(3, 2)).toMatchObject({ ok: true, value: [{ path: deep, size: 4 }] });
  });

  it("readonly instances expose only reading tools", async () => {
    let seen: string[] = [];
    const model = scriptedModel((req) => ((seen = req.tools.map((t) => t.name)), { text: "ok" }));
    const h = harness({ "r.worker": workerFile(`
name: r
model: test:m
toolsets:
  files: { use: files, readonly: true }`) }, { models: { "test:m": model } });
    await h.run({ worker: "r", input: { input: "x" } });
    expect(seen.sort()).toEqual(["list_files", "read_file"]);
  });

  it("a worker exposing one tool name twice fails to load, naming both instances and the tool", () => {
    const fs2 = defineToolset({
      kind: "fs2",
      config: z.strictObject({}),
      create: () => ({}),
      tools: { read_file: tool({ description: "other reader", input: z.strictObject({}), run: () => "x" }) },
    });
    let error: unknown;
    try {
      harness({ "clash.worker": workerFile(`
name: clash
toolsets:
  files: { use: files }
  fs2: { use: fs2 }`) }, { kinds: [fs2] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as Error).message).toContain(
      'clash.worker: toolsets: tool "read_file" is exposed by both instance "files" (files) and instance "fs2" (fs2)',
    );
  });
});
