import type { Model } from "./model";

/**
 * A model whose errors never carry the given values (resolved `${NAME}`s of its
 * provider's config): an upstream may echo a key or a URL with a token in its error
 * body, and a model error is recorded in the run and shown on its page.
 */
export function redactedErrors(model: Model, secrets: Record<string, string>): Model {
  const found = Object.entries(secrets).filter(([, v]) => v.length >= 4);
  if (!found.length) return model;
  return {
    async request(req) {
      try {
        return await model.request(req);
      } catch (err) {
        let message = err instanceof Error ? err.message : String(err);
        for (const [name, value] of found) message = message.split(value).join(`[${name}]`);
        throw new Error(message);
      }
    },
  };
}

/** Vars that remember which values were read: what an interpolated config holds, so what to redact. */
export function recordingVars(vars: Readonly<Record<string, string | undefined>>): { vars: Readonly<Record<string, string | undefined>>; used: Record<string, string> } {
  const used: Record<string, string> = {};
  const recording = new Proxy(vars, {
    get(target, name) {
      const value = target[name as string];
      if (typeof name === "string" && value) used[name] = value;
      return value;
    },
  });
  return { vars: recording, used };
}
