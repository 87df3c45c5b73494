import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { TERMINAL, type RunView } from "../../src/runs/types";
import { stub } from "./helpers";

const ended = (v: RunView | null) => v !== null && TERMINAL.includes(v.status);

/**
 * Drives a parent and its children (as the platform's alarms would) until the parent ended and
 * every child ended and told it: each round runs every run's alarm once. `kill(id)`: whether to
 * kill that run's next activation at its first step (a forced eviction); a killed activation
 * leaves no alarm, and `wake` re-arms it as the runtime's retry would. `beforeRound`: a hook
 * (decide an approval, cancel).
 */
export async function settleTree(
  root: string,
  opts: { kill?: (id: string) => boolean; beforeRound?: (parent: RunView) => Promise<void>; maxRounds?: number } = {},
): Promise<{ parent: RunView; kills: number; rounds: number }> {
  const runs = new Set([root]);
  let kills = 0;
  for (let round = 0; round < (opts.maxRounds ?? 400); round++) {
    const parent = (await stub(root).status())!;
    for (const c of parent.children) runs.add(c.id);
    if (ended(parent) && parent.children.every((c) => c.status !== "running")) return { parent, kills, rounds: round };
    await opts.beforeRound?.(parent);
    for (const id of runs) {
      const before = await stub(id).status();
      if (!before || (ended(before) && id !== root && parent.children.find((c) => c.id === id)?.status !== "running")) continue;
      if (!ended(before) && opts.kill?.(id)) await stub(id).killActivations(1);
      let ran: boolean;
      try {
        ran = await runDurableObjectAlarm(env.RUNS.getByName(id));
      } catch {
        kills++;
        ran = false;
      }
      const after = await stub(id).status();
      if (!ran && after && !ended(after)) await stub(id).wake();
      // A child whose notification of its end failed tries again later: bring its retry forward.
      if (!ran && after && ended(after)) await stub(id).advanceClock(2 * 3_600_000);
    }
  }
  throw new Error(`the run tree of ${root} did not settle`);
}
