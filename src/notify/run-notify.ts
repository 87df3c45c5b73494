/**
 * A run's own completion webhook (`notify_url` of a trigger or of `POST /runs`), as the
 * run keeps it: the URL checked whole (notify-url.ts), and NOTIFY_SECRET set (a webhook
 * is never sent unsigned). Only a trigger file, written by whoever deploys the app, has
 * its `${NAME}`s filled from the app's vars (`where.file`); a URL from an API request is
 * taken as written, or any caller could post the app's secrets to a host of their choice.
 */

import { interpolate } from "../engine/toolsets/interpolate";
import type { NotifyOn, RunNotify } from "../runs/types";
import { notifyUrlProblem } from "./notify-url";

export function runNotify(
  env: Env,
  given: { notify_url?: string; notify_on?: NotifyOn[] },
  where: { file?: string; field: string },
): { url?: NonNullable<RunNotify["url"]> } | { error: string } {
  if (given.notify_url === undefined) return {};
  let url = given.notify_url;
  try {
    if (where.file) url = interpolate(url, env as unknown as Record<string, string | undefined>, { file: where.file, field: where.field }).config as string;
  } catch (err) {
    return { error: (err as Error).message };
  }
  const problem = notifyUrlProblem(url, env.NOTIFY_ALLOW_HOSTS);
  if (problem) return { error: `${where.field}: ${problem}` };
  if (!env.NOTIFY_SECRET) return { error: `${where.field}: NOTIFY_SECRET is not set: completion webhooks are signed (wrangler secret put NOTIFY_SECRET)` };
  return { url: { url, on: given.notify_on?.length ? given.notify_on : ["ended"] } };
}
