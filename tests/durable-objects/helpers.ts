import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { RunView } from "../../src/runs/types";
import { testRun } from "../support/test-objects";

/** A run's object in the test pool (TestRunDO): the app's RPC plus test hooks and storage stats. */
export const stub = (id: string) => testRun(env, id);

/** Loads the fake model server's script for a model name (`openai:<name>` in a worker file). */
export async function script(model: string, replies: unknown[]): Promise<void> {
  const res = await fetch(`${env.FAKE_OPENAI_URL}/scripts/${model}`, { method: "PUT", body: JSON.stringify(replies) });
  if (!res.ok) throw new Error(`fake server refused the script for ${model}`);
}

export async function modelRequests(model: string): Promise<unknown[]> {
  return ((await (await fetch(`${env.FAKE_OPENAI_URL}/scripts/${model}`)).json()) as { requests: unknown[] }).requests;
}

/** The header names of each request the fake server took for `model` (lower-case, as Node gives them). */
export async function modelHeaderNames(model: string): Promise<string[][]> {
  const { headers } = (await (await fetch(`${env.FAKE_OPENAI_URL}/scripts/${model}`)).json()) as { headers: Array<Record<string, unknown>> };
  return headers.map((h) => Object.keys(h));
}

export const effectUrl = (id: string) => `${env.FAKE_OPENAI_URL}/effects/${id}`;

export async function effectCount(id: string): Promise<number> {
  return ((await (await fetch(effectUrl(id))).json()) as { count: number }).count;
}

/** The body of each POST that reached `effectUrl(id)`, in order. */
export async function effectBodies(id: string): Promise<string[]> {
  return ((await (await fetch(`${effectUrl(id)}/bodies`)).json()) as { bodies: string[] }).bodies;
}

/** `drive` for edgework/testing's waitForStatus: this pool sets runs' alarms a minute ahead, so fire the run's now. */
export const driveAlarm = (id: string) => runDurableObjectAlarm(env.RUNS.getByName(id));

/**
 * Drives a run's alarm until it stops: finished, paused for approval, or without
 * an alarm. An activation that throws (an injected fault) leaves no alarm: `wake`
 * re-arms it, as an operator (or the runtime's retry) would.
 */
export async function settle(
  id: string,
  opts: { maxActivations?: number; count?: { activations: number; failed: number }; afterActivation?: () => Promise<void> } = {},
): Promise<RunView> {
  for (let i = 0; i < (opts.maxActivations ?? 50); i++) {
    let ran = false;
    try {
      ran = await runDurableObjectAlarm(env.RUNS.getByName(id));
    } catch {
      ran = true;
      if (opts.count) opts.count.failed++;
    }
    if (ran && opts.count) opts.count.activations++;
    await opts.afterActivation?.();
    const view = (await stub(id).status())!;
    if (!["queued", "running"].includes(view.status)) return view;
    if (!ran) await stub(id).wake();
  }
  throw new Error(`run ${id} did not settle`);
}
