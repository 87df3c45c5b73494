import { normalizeAddress } from "../engine";

/**
 * The person who started a run, as recorded in its trigger: an email trigger's
 * sender (`from`), or the signed-in person an API start names (`initiator`).
 * Normalized; null when no person started it (the API token, a webhook, a schedule).
 */
export function initiatorOf(trigger: unknown): string | null {
  const t = (trigger ?? {}) as Record<string, unknown>;
  const who = t.kind === "email" ? t.from : t.initiator;
  return typeof who === "string" ? normalizeAddress(who) : null;
}
