import { globMatcher } from "../glob";

/**
 * A file's type from its name's extension: what a `files` path says it is. An http
 * download keeps the response's Content-Type instead (see files-disk.ts). Unknown
 * extensions are `application/octet-stream`, which no sensible `types:` list accepts.
 */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  html: "text/html",
  xml: "text/xml",
  yaml: "text/yaml",
  yml: "text/yaml",
  json: "application/json",
};

export function typeByName(name: string): string {
  const dot = name.lastIndexOf(".");
  const ext = dot > name.lastIndexOf("/") ? name.slice(dot + 1).toLowerCase() : "";
  return BY_EXTENSION[ext] ?? "application/octet-stream";
}

/** `image/png; charset=…` → `image/png`; a missing or malformed header → undefined. */
export function essence(contentType: string | null | undefined): string | undefined {
  const t = contentType?.split(";")[0]?.trim().toLowerCase();
  return t && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(t) ? t : undefined;
}

/** Does `mime` match one of the `types` globs (`image/*`)? Linear matcher, case-insensitive. */
export function typeAccepted(mime: string, types: readonly string[]): boolean {
  return types.some((t) => globMatcher(t, { ignoreCase: true, slashes: true })(mime));
}
