import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CatalogError,
  defineToolset,
  files,
  MemoryJournalStore,
  MemoryStateBackend,
  scriptedModel,
  tool,
  type Model,
  type ScriptedReply,
  type StateKV,
  type ToolContext,
} from "../../src/engine";
import { MAX_GLOB_LENGTH } from "../../src/engine/glob";
import { utf8Bytes } from "../../src/engine/journal/bounds";
import { instanceInit } from "../../src/engine/toolsets/instances";
import { confine } from "../../src/engine/toolsets/kinds/files-path";
import { sha256Hex } from "../../src/engine/ids";
import { readBytes, writeBytes, writeText } from "../../src/engine/toolsets/kinds/files-disk";
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
        {
          toolCalls: [
            { name: "src_write_file", args: { path: "main.ts", content: "code" } },
            { name: "docs_write_file", args: { path: "guide.md", content: "prose" } },
          ],
        },
        {
          toolCalls: [
            { name: "src_read_file", args: { path: "main.ts" } },
            { name: "docs_read_file", args: { path: "/docs/guide.md" } },
            { name: "docs_read_file", args: { path: "main.ts" } },
            { name: "src_list_files", args: {} },
          ],
        },
        { text: "done" },
      ];
      return script[n]!;
    });
    const h = harness({ "editor.worker": twoRoots }, { models: { "test:editor": model } });
    const store = new MemoryJournalStore();
    const out = await h.run({ worker: "editor", input: { input: "edit" } }, store);
    expect(out.status).toBe("succeeded");
    expect(seenTools.sort()).toEqual(["delete_file", "list_files", "read_file", "write_file"].flatMap((t) => [`docs_${t}`, `src_${t}`]).sort());
    const result = (n: number) => store.entries.get(`editor/turn:2/tool:${n}/result`);
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

  /** A worker with one `files` instance whose writes need no approval, on the given model. */
  const writerHarness = (model: Model) =>
    harness(
      { "w.worker": workerFile("name: w\nmodel: test:m\ntoolsets:\n  files: { use: files }\napproval:\n  write_file: allow") },
      { models: { "test:m": model } },
    );

  it("reads long files in pieces and says when it truncated", async () => {
    const model = turns(
      [{ name: "write_file", args: { path: "big.txt", content: "abcdefghij" } }],
      [{ name: "read_file", args: { path: "big.txt", offset: 2, max_chars: 3 } }],
    );
    const h = writerHarness(model);
    const store = new MemoryJournalStore();
    await h.run({ worker: "w", input: { input: "x" } }, store);
    const read = store.entries.get("w/turn:2/tool:1/result");
    expect(read).toMatchObject({ ok: true, value: { content: "cde", offset: 2, total_chars: 10, truncated: true } });
  });

  it("list_files with a model's pathological glob returns, and an over-long glob is a tool error naming the limit", async () => {
    const deep = `${"a/".repeat(500)}x.md`; // 1004 characters, no "b"
    const model = turns(
      [
        { name: "write_file", args: { path: deep, content: "deep" } },
        { name: "write_file", args: { path: "notes/b", content: "b" } },
      ],
      [
        { name: "list_files", args: { glob: `${"**".repeat(14)}b` } },
        { name: "list_files", args: { glob: `${"**/".repeat(14)}b` } },
      ],
      [
        { name: "list_files", args: { glob: "*".repeat(MAX_GLOB_LENGTH + 1) } },
        { name: "list_files", args: { glob: "**/*.md" } },
      ],
    );
    const h = writerHarness(model);
    const store = new MemoryJournalStore();
    expect((await h.run({ worker: "w", input: { input: "x" } }, store)).status).toBe("succeeded");
    const result = (turn: number, n: number) => store.entries.get(`w/turn:${turn}/tool:${n}/result`);
    expect(result(2, 1)).toMatchObject({ ok: true, value: [{ path: "notes/b", size: 1 }] });
    expect(result(2, 2)).toMatchObject({ ok: true, value: [{ path: "notes/b", size: 1 }] });
    expect(result(3, 1)).toMatchObject({ ok: false, error: `invalid arguments for list_files: glob: at most ${MAX_GLOB_LENGTH} characters` });
    expect(result(3, 2)).toMatchObject({ ok: true, value: [{ path: deep, size: 4 }] });
  });

  it("readonly instances expose only reading tools", async () => {
    let seen: string[] = [];
    const model = scriptedModel((req) => ((seen = req.tools.map((t) => t.name)), { text: "ok" }));
    const h = harness(
      {
        "r.worker": workerFile(`
name: r
model: test:m
toolsets:
  files: { use: files, readonly: true }`),
      },
      { models: { "test:m": model } },
    );
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
      harness(
        {
          "clash.worker": workerFile(`
name: clash
toolsets:
  files: { use: files }
  fs2: { use: fs2 }`),
        },
        { kinds: [fs2] },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as Error).message).toContain('clash.worker: toolsets: tool "read_file" is exposed by both instance "files" (files) and instance "fs2" (fs2)');
  });

  it("a 3 MB text file is kept in rows far under SQLite's 2 MB limit, and read_file reads it in pieces", async () => {
    const states = new MemoryStateBackend();
    const fs = await files.instantiate("files#big", files.config.parse({}), instanceInit(states, "run", "big", "files", "files#big"));
    const call = (tool: string, args: unknown) => fs.callTool(tool, args, {} as ToolContext);
    // Every character escapes in JSON: as one row this text would be 18 MB.
    const text = "\u0001\u0002é日".repeat(750_000);
    await call("write_file", { path: "big.txt", content: text });
    for (const [key, value] of states.rows) expect(utf8Bytes(key) + utf8Bytes(value), key).toBeLessThan(1_000_000);
    for (const offset of [0, 99_990, 1_234_567, text.length - 5]) {
      expect(await call("read_file", { path: "big.txt", offset, max_chars: 100_000 }), String(offset)).toEqual({
        path: "/big.txt",
        content: text.slice(offset, offset + 100_000),
        offset,
        total_chars: text.length,
        truncated: offset + 100_000 < text.length,
      });
    }
    expect(await call("list_files", {})).toEqual([{ path: "big.txt", size: text.length }]);
    const disk = states.open("run", "big", "~files");
    expect(new TextDecoder().decode((await readBytes(disk, "/big.txt"))!.bytes)).toBe(text);
    // Replaced by a short file, then deleted: no chunk of the long one stays behind.
    await call("write_file", { path: "big.txt", content: "short" });
    expect(await call("read_file", { path: "big.txt" })).toMatchObject({ content: "short", total_chars: 5 });
    expect(states.rows.size).toBe(1);
    await call("delete_file", { path: "big.txt" });
    expect(states.rows.size).toBe(0);
  });

  it("an overwrite that fails part-way leaves the old file whole, never half of either", async () => {
    const states = new MemoryStateBackend();
    const inner = states.open("run", "r", "~files");
    let failAfter = Infinity;
    const disk: StateKV = {
      ...inner,
      put: async (key, value) => {
        if (failAfter-- <= 0) throw new Error("disk full");
        return inner.put(key, value);
      },
    };
    const old = new Uint8Array(1_600_000).map((_, i) => i & 0xff);
    const { sha256 } = await writeBytes(disk, "/a.bin", old, "application/octet-stream");
    for (const fails of [0, 1, 2]) {
      failAfter = fails;
      await expect(writeText(disk, "/a.bin", "x".repeat(250_000))).rejects.toThrow("disk full");
      failAfter = fails;
      await expect(writeBytes(disk, "/a.bin", new Uint8Array(1_600_000), "image/png")).rejects.toThrow("disk full");
      const now = (await readBytes(disk, "/a.bin"))!;
      expect({ sha256: await sha256Hex(now.bytes), type: now.type }, `failing after ${fails} writes`).toEqual({ sha256, type: "application/octet-stream" });
    }
  });
});
