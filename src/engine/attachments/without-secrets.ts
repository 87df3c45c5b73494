import { ToolError } from "../errors";
import { isTextType } from "../model/content-parts";
import type { Substitution } from "../toolsets/interpolate";
import { redactor } from "../toolsets/redactor";

/**
 * A body fetched through an `http` instance — an attachment, or a response saved with
 * `save_to` — with that instance's secrets out of it, as its tool results are (an
 * upstream may echo the header it was sent).
 * Text — what a model is given as text (text/*, JSON) — is redacted in the same forms
 * (raw, JSON-escaped, URL-encoded). Other types reach the model as files (an image, a
 * PDF), where a replaced run of bytes would break the file: one that holds a secret in
 * one of those forms is refused: `refusal` says what was not done, given the vars' names. Not found: a secret inside compressed
 * or encoded content (a PDF's deflated stream, base64), as with tool results.
 */
export function withoutSecrets(bytes: Uint8Array, type: string, secrets: readonly Substitution[], refusal: (vars: string) => string): Uint8Array {
  if (!secrets.length) return bytes;
  // Invalid UTF-8 becomes U+FFFD without swallowing the ASCII after it, so a secret in binary bytes still shows.
  const text = new TextDecoder().decode(bytes);
  const redact = redactor(secrets);
  const redacted = redact(text);
  if (redacted === text) return bytes;
  if (isTextType(type)) return new TextEncoder().encode(redacted);
  const held = secrets.filter((s) => redactor([s])(text) !== text).map((s) => s.name);
  throw new ToolError(refusal(held.join(", ")));
}
