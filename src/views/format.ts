import type { Decider } from "../engine/types/deciders";
import { isoInstant } from "../engine/iso-time";

/** Arguments as people read them: pretty JSON, cut to `max` characters. */
export function prettyArgs(args: unknown, max = 4000): string {
  const text = JSON.stringify(args, null, 2) ?? "null";
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}

/** "the API", "webhook github-issues (delivery 72d3…)", "schedule nightly (2026-…Z)", "email support from ann@…". */
export function describeTrigger(trigger: unknown): string {
  const t = (trigger ?? {}) as { kind?: string; name?: string; delivery?: string; scheduled_time?: string; from?: string; initiator?: string };
  if (t.kind === "webhook") return `webhook ${t.name ?? "?"}${t.delivery ? ` (delivery ${t.delivery})` : ""}`;
  if (t.kind === "api") return "the API";
  if (t.kind === "schedule") return `schedule ${t.name ?? "?"} (${t.scheduled_time ?? "?"})`;
  if (t.kind === "email") return `email ${t.name ?? "?"} from ${t.from ?? "?"}`;
  if (t.kind === "slack") return `slack ${t.name ?? "?"} from ${t.initiator ?? "?"}`;
  if (t.kind === "fork") return `a fork of run ${t.name ?? "?"}`;
  return "unknown";
}

/** A time as people read it (to the second); "—" for none, or for one no Date holds (never a throw: iso-time.ts). */
export const isoTime = (ms: number | null | undefined) => (ms && isoInstant(ms)?.replace(/\.\d+Z$/, "Z")) || "—";

/** A person who decided, and the way: "lead@example.com (via link)". */
export const personOf = (by: Decider) => `${by.email ?? "the API token"} (via ${by.via})`;

export const usd = (n: number | undefined) => `$${(n ?? 0).toFixed(6)}`;
