import { fromBase64, toBase64 } from "../../model/content-parts";
import type { StateKV } from "../toolset";

/**
 * How the `files` kind keeps files in its scope's state. A text file is its text
 * under `file:<path>` (as before binary support). A binary file is a description
 * under `file:<path>` and its bytes as base64 in chunks under `blob:<path>#<n>`:
 * one state row holds at most ~1 MB, well under SQLite's 2 MB, whatever the file's size.
 */
export interface BinaryFile {
  binary: { type: string; size: number; sha256: string; chunks: number };
}
export type StoredFile = string | BinaryFile;

const CHUNK_BYTES = 750_000;

export const fileKey = (abs: string) => `file:${abs}`;
const chunkKey = (abs: string, n: number) => `blob:${abs}#${n}`;

export const isBinary = (f: StoredFile): f is BinaryFile => typeof f === "object" && f !== null && "binary" in f;


export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The file's bytes (text as UTF-8), or undefined when there is none. */
export async function readBytes(disk: StateKV, abs: string): Promise<{ bytes: Uint8Array; type?: string } | undefined> {
  const stored = await disk.get<StoredFile>(fileKey(abs));
  if (stored === undefined) return undefined;
  if (!isBinary(stored)) return { bytes: new TextEncoder().encode(stored) };
  const bytes = new Uint8Array(stored.binary.size);
  for (let n = 0, at = 0; n < stored.binary.chunks; n++) {
    const part = fromBase64((await disk.get<string>(chunkKey(abs, n))) ?? "");
    bytes.set(part.subarray(0, bytes.length - at), at);
    at += part.length;
  }
  return { bytes, type: stored.binary.type };
}

export async function writeText(disk: StateKV, abs: string, text: string): Promise<void> {
  await removeChunks(disk, abs);
  await disk.put(fileKey(abs), text);
}

export async function writeBytes(disk: StateKV, abs: string, bytes: Uint8Array, type: string): Promise<BinaryFile["binary"]> {
  await removeChunks(disk, abs);
  const chunks = Math.ceil(bytes.length / CHUNK_BYTES);
  for (let n = 0; n < chunks; n++) await disk.put(chunkKey(abs, n), toBase64(bytes.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES)));
  const binary = { type, size: bytes.length, sha256: await sha256Hex(bytes), chunks };
  await disk.put(fileKey(abs), { binary });
  return binary;
}

export async function removeFile(disk: StateKV, abs: string): Promise<boolean> {
  await removeChunks(disk, abs);
  return disk.delete(fileKey(abs));
}

async function removeChunks(disk: StateKV, abs: string): Promise<void> {
  const old = await disk.get<StoredFile>(fileKey(abs));
  if (old === undefined || !isBinary(old)) return;
  for (let n = 0; n < old.binary.chunks; n++) await disk.delete(chunkKey(abs, n));
}
