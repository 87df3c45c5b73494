/** Reads a positive number from a var, or the default; a bad value is a config error, not a silent default. */
export function numberVar(env: Env, name: keyof Env, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${String(name)} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return n;
}
