import type { ContentPart } from "../types/model";

/**
 * A user message's parts with the attachments read, each in the form models take it:
 * images as images, text (text/*, JSON) inline as text, anything else (PDF) as a file.
 * Chat-style APIs take files only as PDFs; other types are sent as files all the same
 * and the provider says if it refuses them (the worker's `attachments.types` decides
 * what may come).
 */
export type ResolvedPart =
  | { type: "text"; text: string }
  | { type: "image"; mime: string; base64: string }
  | { type: "file"; filename: string; mime: string; base64: string };

export const isTextType = (mime: string) => mime.startsWith("text/") || mime === "application/json";

export async function resolveParts(parts: ContentPart[]): Promise<ResolvedPart[]> {
  return Promise.all(
    parts.map(async (p): Promise<ResolvedPart> => {
      if (p.type === "text") return p;
      const bytes = await p.bytes();
      if (isTextType(p.mime)) return { type: "text", text: `Attachment ${p.name} (${p.mime}):\n${new TextDecoder().decode(bytes)}` };
      if (p.mime.startsWith("image/")) return { type: "image", mime: p.mime, base64: toBase64(bytes) };
      return { type: "file", filename: p.name, mime: p.mime, base64: toBase64(bytes) };
    }),
  );
}

export const dataUrl = (mime: string, base64: string) => `data:${mime};base64,${base64}`;

/** Base64 in slices: spreading megabytes into `String.fromCharCode` would overflow the stack. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
