import { ToolError } from "../../errors";

/** One `files` instance as a path sees it: its name in the worker file and its root. */
export interface FilesRoot {
  instance: string;
  root: string;
}

/** A path resolved under one instance's root. */
export interface ResolvedPath {
  instance: string;
  /** Absolute, under the instance's root: what `read_file` answers with. */
  path: string;
  /** The canonical reference, `<instance>:<path>`, which resolves to the same file again. */
  ref: string;
}

// An instance name as worker files allow it, then a colon: `docs:` in `docs:report.pdf`.
const INSTANCE_PREFIX = /^([a-zA-Z0-9_-]{1,64}):/;

/**
 * The one path rule of `files` instances, used by their tools, attachment references,
 * `save_to` and the pages alike, so one string names one file everywhere:
 * `[<instance>:]<path>`, where the optional prefix picks the instance (required when the
 * worker has several) and the path is either relative to its root (`note.txt`) or
 * absolute and under its root (`/w/note.txt` for root `/w`). NUL, `..` segments and
 * absolute paths outside the root are refused, naming the root.
 */
export function resolveFilePath(ref: string, roots: readonly FilesRoot[], owner: string): ResolvedPath {
  const m = INSTANCE_PREFIX.exec(ref);
  const names = () => roots.map((r) => r.instance).join(", ") || "(none)";
  let at: FilesRoot | undefined;
  if (m) {
    at = roots.find((r) => r.instance === m[1]);
    if (!at) throw new ToolError(`"${ref}": ${owner} has no files instance "${m[1]}"; its files instances: ${names()}`);
  } else {
    if (roots.length !== 1) throw new ToolError(`"${ref}": name the files instance, as in <instance>:${ref}; ${owner}'s files instances: ${names()}`);
    at = roots[0]!;
  }
  const path = confine(at.root, m ? ref.slice(m[0].length) : ref);
  return { instance: at.instance, path, ref: `${at.instance}:${path}` };
}

/** `p` under `root`: relative to it, or absolute inside it (no instance prefix). */
export function confine(root: string, p: string): string {
  if (p.includes("\0")) throw new ToolError("path contains a NUL character");
  const inside = p === root || p.startsWith(root === "/" ? "/" : `${root}/`);
  const rel = p.startsWith("/") ? (inside ? p.slice(root.length) : null) : p;
  if (rel === null) throw new ToolError(`path "${p}" is outside this toolset's root ${root}`);
  const parts = rel.split("/").filter((s) => s && s !== ".");
  if (parts.includes("..")) throw new ToolError(`path "${p}" uses "..": paths stay under the root ${root}`);
  if (!parts.length) throw new ToolError(`path "${p}" names the root itself, not a file`);
  return `${root === "/" ? "" : root}/${parts.join("/")}`;
}
