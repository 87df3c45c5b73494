import { ToolError } from "../../errors";
import { fromBase64, toBase64 } from "../../model/content-parts";
import { sha256Hex } from "../../ids";
import type { StateKV } from "../../types/state";

/**
 * How the `files` kind keeps files in its scope's state, every row well under
 * SQLite's 2 MB whatever the file's size:
 * - a short text file is its text under `file:<path>`;
 * - a longer text file is a description `{text}` under `file:<path>` and its text
 *   in slices of TEXT_CHUNK_CHARS, so `read_file` loads only the slices it returns;
 * - a binary file is a description `{binary}` and its bytes as base64 in chunks.
 * Chunks are keyed by a generation fresh for every write. An overwrite writes the
 * new chunks, then switches the description, then deletes the old chunks: a reader
 * finds the old file or the new one, never half of one.
 */
export interface BinaryFile {
  /** `gen` is absent for files written before generations (their chunks are `blob:<path>#<n>`). */
  binary: { type: string; size: number; sha256: string; chunks: number; gen?: string };
}
export interface LongText {
  /** `chars` as `read_file` counts them (UTF-16 code units); `size` in UTF-8 bytes. */
  text: { chars: number; size: number; chunks: number; gen: string };
}
export type StoredFile = string | LongText | BinaryFile;

/** At most 600 KB as JSON even when every character escapes to `\uXXXX`. */
export const TEXT_CHUNK_CHARS = 100_000;
/** 1 MB as base64. */
const CHUNK_BYTES = 750_000;

export const fileKey = (abs: string) => `file:${abs}`;
const chunkKey = (abs: string, n: number, gen?: string) => (gen ? `blob:${abs}#${gen}:${n}` : `blob:${abs}#${n}`);
const newGen = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);

export const isBinary = (f: StoredFile): f is BinaryFile => typeof f === "object" && f !== null && "binary" in f;

/** Characters for a text file (as read_file counts), bytes for a binary one. */
export const fileLength = (f: StoredFile) => (typeof f === "string" ? f.length : isBinary(f) ? f.binary.size : f.text.chars);

/** The file's size in bytes (text as UTF-8), known without reading its content. */
export const fileBytes = (f: StoredFile) => (typeof f === "string" ? new TextEncoder().encode(f).byteLength : isBinary(f) ? f.binary.size : f.text.size);

async function chunk(disk: StateKV, abs: string, n: number, gen?: string): Promise<string> {
  const part = await disk.get<string>(chunkKey(abs, n, gen));
  // Only a concurrent overwrite that finished between the description and this read gets here.
  if (part === undefined) throw new ToolError(`${abs} was replaced while it was being read; read it again`);
  return part;
}

/** Characters `[offset, offset + maxChars)` of a text file, reading only the slices they span. */
export async function readText(disk: StateKV, abs: string, f: string | LongText, offset: number, maxChars: number): Promise<string> {
  if (typeof f === "string") return f.slice(offset, offset + maxChars);
  const end = Math.min(offset + maxChars, f.text.chars);
  const first = Math.floor(offset / TEXT_CHUNK_CHARS);
  let text = "";
  for (let n = first; n * TEXT_CHUNK_CHARS < end; n++) text += await chunk(disk, abs, n, f.text.gen);
  return text.slice(offset - first * TEXT_CHUNK_CHARS, end - first * TEXT_CHUNK_CHARS);
}

/** The file's bytes (text as UTF-8), or undefined when there is none. */
export async function readBytes(disk: StateKV, abs: string): Promise<{ bytes: Uint8Array; type?: string } | undefined> {
  const stored = await disk.get<StoredFile>(fileKey(abs));
  if (stored === undefined) return undefined;
  if (!isBinary(stored)) return { bytes: new TextEncoder().encode(await readText(disk, abs, stored, 0, fileLength(stored))) };
  const bytes = new Uint8Array(stored.binary.size);
  for (let n = 0, at = 0; n < stored.binary.chunks; n++) {
    const part = fromBase64(await chunk(disk, abs, n, stored.binary.gen));
    bytes.set(part.subarray(0, bytes.length - at), at);
    at += part.length;
  }
  return { bytes, type: stored.binary.type };
}

export async function writeText(disk: StateKV, abs: string, text: string): Promise<void> {
  if (text.length <= TEXT_CHUNK_CHARS) return replace(disk, abs, text);
  const gen = newGen();
  const chunks = Math.ceil(text.length / TEXT_CHUNK_CHARS);
  for (let n = 0; n < chunks; n++) await disk.put(chunkKey(abs, n, gen), text.slice(n * TEXT_CHUNK_CHARS, (n + 1) * TEXT_CHUNK_CHARS));
  await replace(disk, abs, { text: { chars: text.length, size: new TextEncoder().encode(text).byteLength, chunks, gen } });
}

export async function writeBytes(disk: StateKV, abs: string, bytes: Uint8Array, type: string): Promise<BinaryFile["binary"]> {
  const gen = newGen();
  const chunks = Math.ceil(bytes.length / CHUNK_BYTES);
  for (let n = 0; n < chunks; n++) await disk.put(chunkKey(abs, n, gen), toBase64(bytes.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES)));
  const binary = { type, size: bytes.length, sha256: await sha256Hex(bytes), chunks, gen };
  await replace(disk, abs, { binary });
  return binary;
}

export async function removeFile(disk: StateKV, abs: string): Promise<boolean> {
  const old = await disk.get<StoredFile>(fileKey(abs));
  if (old === undefined) return false;
  await disk.delete(fileKey(abs));
  await removeChunks(disk, abs, old);
  return true;
}

/** Points `file:<path>` at the new content (its chunks already written), then drops the old content's chunks. */
async function replace(disk: StateKV, abs: string, next: StoredFile): Promise<void> {
  const old = await disk.get<StoredFile>(fileKey(abs));
  await disk.put(fileKey(abs), next);
  if (old !== undefined) await removeChunks(disk, abs, old);
}

async function removeChunks(disk: StateKV, abs: string, f: StoredFile): Promise<void> {
  if (typeof f === "string") return;
  const { chunks, gen } = isBinary(f) ? f.binary : f.text;
  for (let n = 0; n < chunks; n++) await disk.delete(chunkKey(abs, n, gen));
}
