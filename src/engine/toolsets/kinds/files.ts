import * as z from "zod";
import { ToolError } from "../../errors";
import { globMatcher, MAX_GLOB_LENGTH } from "../../glob";
import { defineToolset, tool } from "../define";
import { resolveFilePath, type FilesRoot } from "./files-path";
import { fileKey, fileLength, isBinary, readText, removeFile, writeText, type StoredFile } from "./files-disk";
import type { StateKV } from "../../types/state";

interface FilesInstance extends FilesRoot {
  max_file_bytes: number;
  /** The scope's disk, shared by every `files` instance in that scope. */
  disk: StateKV;
}

const path = z.string().min(1).max(1024).describe("path relative to the root, e.g. notes/todo.md, or absolute under the root");

/** A tool's path, by the same rule as attachment references (an own `<instance>:` prefix is allowed). */
const resolve = (self: FilesInstance, p: string) => resolveFilePath(p, [self], `this tool (files instance "${self.instance}")`).path;

const key = fileKey;

/** A text file's size in characters (as read_file counts); a binary file's in bytes, with its type. */
const listed = (path: string, f: StoredFile) => (isBinary(f) ? { path, size: f.binary.size, type: f.binary.type } : { path, size: fileLength(f) });

/** A virtual filesystem in the owning scope's durable state, confined under `root`. */
export const files = defineToolset({
  kind: "files",
  description: "Read and write files in a virtual filesystem",
  config: z.strictObject({
    root: z
      .string()
      .default("/")
      .refine((r) => r.startsWith("/") && !r.split("/").includes("..") && !r.includes("\0"), "must be an absolute path without '..'")
      .transform((r) => (r.length > 1 ? r.replace(/\/+$/, "") : r)),
    /** Bounds each file written here, by a tool or by an http download (`save_to`). */
    max_file_bytes: z.number().int().min(1).max(20_000_000).default(10_000_000),
  }),
  create: (config, init): FilesInstance => ({ ...config, instance: init.name, disk: init.shared("files") }),
  tools: {
    read_file: tool({
      description: "Read a text file. Long files come in pieces: pass offset to continue. A binary file (image, PDF) gives its type and size only.",
      readOnly: true,
      input: z.strictObject({
        path,
        offset: z.number().int().min(0).optional().describe("character offset to start at"),
        max_chars: z.number().int().min(1).max(100_000).optional().describe("at most this many characters (default 20000)"),
      }),
      async run({ path: p, offset = 0, max_chars = 20_000 }, _ctx, self: FilesInstance) {
        const abs = resolve(self, p);
        const content = await self.disk.get<StoredFile>(key(abs));
        if (content === undefined) throw new ToolError(`no file at ${abs}`);
        // The bytes would be noise to the model and could flood the journal: describe them.
        if (isBinary(content)) return { path: abs, binary: true, type: content.binary.type, size: content.binary.size, sha256: content.binary.sha256 };
        const piece = await readText(self.disk, abs, content, offset, max_chars);
        const total = fileLength(content);
        return { path: abs, content: piece, offset, total_chars: total, truncated: offset + piece.length < total };
      },
    }),
    list_files: tool({
      description: "List files under the root, optionally matching a glob such as **/*.md",
      readOnly: true,
      input: z.strictObject({ glob: z.string().max(MAX_GLOB_LENGTH, `at most ${MAX_GLOB_LENGTH} characters`).optional() }),
      async run({ glob }, _ctx, self: FilesInstance) {
        const head = key(self.root === "/" ? "/" : `${self.root}/`);
        const matches = glob ? globMatcher(glob, { slashes: true }) : () => true;
        return (await self.disk.list(head)).map(([k, v]) => listed(k.slice(head.length), v as StoredFile)).filter((f) => matches(f.path));
      },
    }),
    write_file: tool({
      description: "Create or replace a text file",
      input: z.strictObject({ path, content: z.string() }),
      async run({ path: p, content }, _ctx, self: FilesInstance) {
        const abs = resolve(self, p);
        const bytes = new TextEncoder().encode(content).byteLength;
        if (bytes > self.max_file_bytes) throw new ToolError(`${abs}: ${bytes} bytes is over this toolset's max_file_bytes (${self.max_file_bytes})`);
        await writeText(self.disk, abs, content);
        return { path: abs, written_chars: content.length };
      },
    }),
    delete_file: tool({
      description: "Delete a file",
      input: z.strictObject({ path }),
      async run({ path: p }, _ctx, self: FilesInstance) {
        const abs = resolve(self, p);
        if (!(await removeFile(self.disk, abs))) throw new ToolError(`no file at ${abs}`);
        return { path: abs, deleted: true };
      },
    }),
  },
});
