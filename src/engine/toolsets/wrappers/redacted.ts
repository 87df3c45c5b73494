import { contextWith } from "../../run/context-with";
import { messageOf, propagates, RunError, ToolError } from "../../errors";
import type { Substitution } from "../interpolate";
import type { ToolContext } from "../../types/context";
import type { Toolset } from "../../types/toolset";

/**
 * Shorter values are not redacted: replacing "true", "8080" or "eu" wherever they
 * occur would garble ordinary results, and a value that short is no credential.
 */
export const MIN_REDACTED_LENGTH = 8;

/**
 * Replaces each value, in the forms an upstream may echo it — as is, escaped inside
 * a JSON string, URL-encoded (also with `+` for spaces) — by `[redacted:NAME]`.
 * Not covered: other encodings (base64, hex, HTML entities) and fragments of a value.
 */
export function redactor(secrets: readonly Substitution[]): (text: string) => string {
  const marks = new Map<string, string>();
  for (const { name, value } of secrets) {
    if (value.length < MIN_REDACTED_LENGTH) continue;
    const url = encodeURIComponent(value);
    for (const form of [value, JSON.stringify(value).slice(1, -1), url, url.replaceAll("%20", "+")]) if (!marks.has(form)) marks.set(form, `[redacted:${name}]`);
  }
  // Longest first, so a value that contains another is replaced whole.
  const forms = [...marks].sort((a, b) => b[0].length - a[0].length);
  return (text) => forms.reduce((t, [form, mark]) => (t.includes(form) ? t.replaceAll(form, mark) : t), text);
}

/** Every string in a JSON-like value, keys too; other objects as the journal would store them (JSON). */
function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return redactDeep(JSON.parse(JSON.stringify(value)), redact);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), redactDeep(v, redact)]));
}

/** The error with its text redacted; engine signals (approval, interruption, storage) carry none of the instance's text and pass unchanged. */
export function redactError(err: unknown, redact: (text: string) => string): unknown {
  if (err instanceof RunError) return new RunError(err.code, redact(err.message), err.fatal);
  if (propagates(err)) return err;
  return new ToolError(redact(messageOf(err)));
}

/**
 * The `${NAME}` values an instance's config was filled with never come back out of
 * it: its tool list (descriptions, schemas, a listing error), results (every string,
 * deep), errors, the values it memoizes with `ctx.step` and errors of `close()` are redacted before the journal, the model or a log sees them.
 */
export function redacted(inner: Toolset, secrets: readonly Substitution[]): Toolset {
  if (!secrets.some((s) => s.value.length >= MIN_REDACTED_LENGTH)) return inner;
  const redact = redactor(secrets);
  return {
    id: inner.id,
    // A dynamic kind's list (an MCP server's descriptions, or its error) is upstream text too.
    async listTools() {
      try {
        return (await inner.listTools()).map((d) => ({ ...d, description: redact(d.description), parameters: redactDeep(d.parameters, redact) as typeof d.parameters }));
      } catch (err) {
        throw redactError(err, redact);
      }
    },
    async callTool(name, args, ctx) {
      // Redacted before it is recorded, so the first run and every replay see the same value.
      const step: ToolContext["step"] = (key, fn) => ctx.step(key, async () => redactDeep(await fn(), redact) as Awaited<ReturnType<typeof fn>>);
      try {
        return redactDeep(await inner.callTool(name, args, contextWith(ctx, { step })), redact);
      } catch (err) {
        throw redactError(err, redact);
      }
    },
    close:
      inner.close &&
      (async () => {
        try {
          await inner.close!();
        } catch (err) {
          throw new Error(redact(messageOf(err)));
        }
      }),
  };
}
