/**
 * The names in wrangler.toml's top-level `[vars]` table: configuration the app may
 * show, unlike secrets (`wrangler secret put`, `.dev.vars`), which the runtime gives
 * the Worker in the same `env` and cannot be told apart there. An environment's
 * `[env.<name>.vars]` are not read: their values count as secrets (redacted).
 * Reads keys only, line by line, and throws on a multi-line string rather than
 * guess which of its lines are keys.
 */
export function varNamesInWranglerToml(toml: string): string[] {
  const table = /^[ \t]*\[vars\][ \t]*(?:#.*)?$/m.exec(toml);
  if (!table) return [];
  const rest = toml.slice(table.index + table[0].length);
  const end = rest.search(/^[ \t]*\[/m);
  const body = end < 0 ? rest : rest.slice(0, end);
  if (body.includes('"""') || body.includes("'''"))
    throw new Error("wrangler.toml: [vars]: multi-line strings are not supported here; write the value on one line");
  const names: string[] = [];
  for (const line of body.split("\n")) {
    const key = /^[ \t]*(?:([A-Za-z0-9_-]+)|"([A-Za-z0-9_-]+)")[ \t]*=/.exec(line);
    if (key) names.push(key[1] ?? key[2]!);
  }
  return names;
}
