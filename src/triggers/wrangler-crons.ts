/**
 * The build's check that wrangler.toml schedules exactly the cron expressions
 * the scheduled triggers use: a missing one would never fire, an extra one
 * would wake the app for nothing (and warn every time).
 */

/**
 * The strings of `crons = [...]` in wrangler.toml's top-level `[triggers]` table
 * ([] without one). Reads just that array — strings, commas, comments — and
 * throws on anything else rather than guess.
 */
export function cronsInWranglerToml(toml: string): string[] {
  const table = /^[ \t]*\[triggers\][ \t]*(?:#.*)?$/m.exec(toml);
  if (!table) return [];
  const rest = toml.slice(table.index + table[0].length);
  const end = rest.search(/^[ \t]*\[/m);
  const body = end < 0 ? rest : rest.slice(0, end);
  const key = /^[ \t]*crons[ \t]*=[ \t]*\[/m.exec(body);
  if (!key) return [];
  const crons: string[] = [];
  let i = key.index + key[0].length;
  for (;;) {
    const c = body[i];
    if (c === undefined) throw new Error("wrangler.toml: [triggers] crons: the array is not closed with ]");
    if (c === "]") return crons;
    if (/[\s,]/.test(c)) i++;
    else if (c === "#") i = body.indexOf("\n", i) < 0 ? body.length : body.indexOf("\n", i);
    else if (c === '"' || c === "'") {
      const close = body.indexOf(c, i + 1);
      if (close < 0) throw new Error("wrangler.toml: [triggers] crons: a string is not closed");
      crons.push(body.slice(i + 1, close));
      i = close + 1;
    } else throw new Error(`wrangler.toml: [triggers] crons: unexpected ${JSON.stringify(c)}; expected quoted cron expressions`);
  }
}

/** Each way the two lists differ, as a sentence naming the expression and the trigger; [] when they agree. */
export function cronMismatches(used: Iterable<{ name: string; schedule: string }>, listed: readonly string[]): string[] {
  const users = new Map<string, string[]>();
  for (const t of used) users.set(t.schedule, [...(users.get(t.schedule) ?? []), t.name]);
  const problems: string[] = [];
  for (const [cron, names] of users) {
    if (!listed.includes(cron)) problems.push(`"${cron}" (trigger ${names.join(", ")}) is not in wrangler.toml's [triggers] crons: add it, or it never fires`);
  }
  for (const cron of listed) {
    if (!users.has(cron)) problems.push(`"${cron}" is in wrangler.toml's [triggers] crons but no trigger in triggers.yaml uses it: remove it`);
  }
  return problems;
}
