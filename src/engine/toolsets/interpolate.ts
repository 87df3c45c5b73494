import { RunError } from "../errors";

const VAR = /\$\{([A-Z][A-Z0-9_]*)(?::-([^}]*))?\}/g;

/** One `${NAME}` filled from the app's vars (a default written in the file is not one). */
export interface Substitution {
  name: string;
  value: string;
}

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string of a toolset config
 * with the app's vars (secrets such as GITHUB_TOKEN stay out of worker files), and
 * reports which values it put in, so they can be redacted from what the instance returns.
 * A missing var without a default fails the worker call, naming file, field and var.
 */
export function interpolate(
  config: unknown,
  vars: Readonly<Record<string, string | undefined>>,
  where: { file: string; field: string },
): { config: unknown; substituted: Substitution[] } {
  const substituted = new Map<string, string>();
  const fill = (value: unknown, field: string): unknown => {
    if (typeof value === "string") {
      return value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
        const set = vars[name];
        if (set) {
          substituted.set(name, set);
          return set;
        }
        if (fallback === undefined)
          throw new RunError("config", `${where.file}: ${field}: uses \${${name}}, which is not set (wrangler secret put ${name}, or .dev.vars locally)`);
        return fallback;
      });
    }
    if (Array.isArray(value)) return value.map((v, i) => fill(v, `${field}.${i}`));
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, `${field}.${k}`)]));
    return value;
  };
  const filled = fill(config, where.field);
  return { config: filled, substituted: [...substituted].map(([name, value]) => ({ name, value })) };
}

export const usesVars = (config: unknown): boolean => JSON.stringify(config ?? null).includes("${");
