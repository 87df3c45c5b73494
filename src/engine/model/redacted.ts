import { redactor } from "../toolsets/redactor";
import type { Substitution } from "../toolsets/interpolate";
import type { Model } from "../types/model";

/**
 * A model whose errors never carry the resolved `${NAME}`s of its provider's config:
 * an upstream may echo a key or a URL with a token in its error body, and a model
 * error is recorded in the run and shown on its page. Same forms and rules as the
 * toolset redaction wrapper.
 */
export function redactedErrors(model: Model, secrets: readonly Substitution[]): Model {
  const redact = redactor(secrets);
  return {
    async request(req) {
      try {
        return await model.request(req);
      } catch (err) {
        throw new Error(redact(err instanceof Error ? err.message : String(err)));
      }
    },
  };
}
