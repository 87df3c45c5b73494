import * as z from "zod";
import type { CompensateConfig } from "../types/compensate";

/**
 * A toolset instance's `compensate:` (worker files): per tool, the call of another tool
 * of the same instance that undoes it, made in reverse order when the run fails after
 * the effect (run/compensate.ts). Every part bounded, and no code: an argument is a
 * literal or a path into the call's arguments or result.
 *
 *   compensate:
 *     create_issue: { tool: close_issue, args: { number: "${result.number}", repo: "${args.repo}" } }
 */

const MAX_TOOLS = 16;
const MAX_ARGS = 16;
const MAX_PATH_SEGMENTS = 8;
const MAX_UNDO_ARGS_CHARS = 16_384;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** `${args.a.b}`, `${result}`, `${result.items.0.id}`: the whole value, never a piece of a string. */
const REFERENCE = /^\$\{(args|result)((?:\.[A-Za-z0-9_-]{1,64}){0,8})\}$/;

const literal = z.union([
  z
    .string()
    .max(256)
    .refine((s) => !s.startsWith("${") || REFERENCE.test(s), "must be ${args.<path>} or ${result.<path>} (up to 8 names), or a literal"),
  z.number(),
  z.boolean(),
  z.null(),
]);

// Described in docs/reference.md ("compensate"), not here: the deployed bundle carries this schema.
const compensation = z.strictObject({
  tool: z.string().regex(NAME, "must be a tool's name in the kind"),
  args: z
    .record(z.string().regex(NAME, "must be an argument name"), literal)
    .refine((a) => Object.keys(a).length <= MAX_ARGS, `at most ${MAX_ARGS} arguments`)
    .optional(),
});

export const compensateSchema: z.ZodType<CompensateConfig, unknown> = z
  .record(z.string().regex(NAME, "must be a tool's name in the kind"), compensation)
  .refine((c) => Object.keys(c).length <= MAX_TOOLS, `at most ${MAX_TOOLS} tools`);

export type { CompensateConfig };

/**
 * The undoing call's arguments: each `${args.…}` / `${result.…}` replaced by the value at
 * that path (own properties only; text on the way that is JSON, as http's `body`, is read as JSON; from a result, only a
 * string, number, boolean or null), literals as
 * written. A path that names nothing is an error naming it: the compensation cannot be made.
 */
export function undoArgs(template: Record<string, unknown> | undefined, args: unknown, result: unknown): Record<string, unknown> {
  const out: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(template ?? {})) {
    const ref = typeof value === "string" ? REFERENCE.exec(value) : null;
    if (!ref) {
      out.push([name, value]);
      continue;
    }
    const path = ref[2] ? ref[2].slice(1).split(".") : [];
    const found = at(ref[1] === "args" ? args : result, path.slice(0, MAX_PATH_SEGMENTS));
    if (found === undefined) throw new Error(`${value}: the call's ${ref[1]} has nothing there`);
    // The result is the upstream's word: it may fill in a value, never shape an argument (an object of headers, a body).
    if (ref[1] === "result" && found !== null && !["string", "number", "boolean"].includes(typeof found))
      throw new Error(
        `${value}: the call's result holds ${Array.isArray(found) ? "a list" : "an object"} there; an undo takes only text, numbers and booleans from a result`,
      );
    out.push([name, found]);
  }
  // Own properties whatever the names (`__proto__` included); bounded, as a journal row holds them.
  const built = Object.fromEntries(out);
  if (JSON.stringify(built).length > MAX_UNDO_ARGS_CHARS) throw new Error(`its arguments are over ${MAX_UNDO_ARGS_CHARS} characters`);
  return built;
}

/** The arguments a kind's code gave an undo (a tool's `undo`): a plain object, bounded as a journal row holds them. */
export function undoArgsGiven(args: unknown): Record<string, unknown> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new Error("its undo gave arguments that are not an object");
  const text = JSON.stringify(args);
  if (text.length > MAX_UNDO_ARGS_CHARS) throw new Error(`its arguments are over ${MAX_UNDO_ARGS_CHARS} characters`);
  // A copy through JSON: own, plain values only (what the journal would keep anyway).
  return JSON.parse(text) as Record<string, unknown>;
}

function parsed(result: unknown): unknown {
  if (typeof result !== "string") return result;
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
}

function at(value: unknown, path: string[]): unknown {
  let v = value;
  for (const segment of path) {
    v = parsed(v);
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, segment)) return undefined;
    v = (v as Record<string, unknown>)[segment];
  }
  return v;
}
