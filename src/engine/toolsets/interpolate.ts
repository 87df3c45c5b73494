import { RunError } from "../errors";

const VAR = /\$\{([A-Z][A-Z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string of a toolset config
 * with the app's vars (secrets such as GITHUB_TOKEN stay out of worker files).
 * A missing var without a default fails the worker call, naming file, field and var.
 */
export function interpolate(config: unknown, vars: Readonly<Record<string, string | undefined>>, where: { file: string; field: string }): unknown {
  if (typeof config === "string") {
    return config.replace(VAR, (_m, name: string, fallback: string | undefined) => {
      const value = vars[name] || fallback;
      if (value === undefined) throw new RunError("config", `${where.file}: ${where.field}: uses \${${name}}, which is not set (wrangler secret put ${name}, or .dev.vars locally)`);
      return value;
    });
  }
  if (Array.isArray(config)) return config.map((v, i) => interpolate(v, vars, { ...where, field: `${where.field}.${i}` }));
  if (config && typeof config === "object") {
    return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, interpolate(v, vars, { ...where, field: `${where.field}.${k}` })]));
  }
  return config;
}

export const usesVars = (config: unknown): boolean => JSON.stringify(config ?? null).includes("${");
