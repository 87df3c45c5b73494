import type { Substitution } from "./interpolate";

/**
 * Which filled-in `${NAME}` values are secrets, to be redacted from what an instance
 * returns: all of them but plain vars' (the `plainVars` names: wrangler.toml `[vars]`
 * the user did not mark secret). A name the build does not know as a var is a secret,
 * and so is a plain var's value when a secret has the same one: showing it would show the secret.
 */
export function secretsAmong(
  vars: Readonly<Record<string, string | undefined>>,
  plainVars: readonly string[],
): (filled: readonly Substitution[]) => Substitution[] {
  const plain = new Set(plainVars);
  const secretValues = new Set(Object.entries(vars).flatMap(([name, value]) => (value && !plain.has(name) ? [value] : [])));
  return (filled) => filled.filter((s) => !plain.has(s.name) || secretValues.has(s.value));
}
