import { sign } from "@octokit/webhooks-methods";
import { exports } from "cloudflare:workers";
import { env } from "cloudflare:workers";
import { runIdFor } from "../../src/triggers/delivery";
import { sha256Hex } from "../../src/engine/ids";
import { testFlowKey } from "../support/test-flow-key";

const GITHUB_SECRET = "It's a Secret to Everybody";

/** One issue event of the fixture repository: `seq` tells deliveries apart (and orders them). */
export const issueBody = (issue: number, seq: number, title = `Issue ${issue}`, repo = "octo/flow") =>
  JSON.stringify({ action: "edited", issue: { number: issue, title }, repository: { full_name: repo }, seq });

/** A signed GitHub delivery of `body` to trigger `name`; `delivery`: its X-GitHub-Delivery (null: none, as a relay might drop it). */
export async function deliver(
  name: string,
  body: string,
  delivery: string | null = `gh-${crypto.randomUUID()}`,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await exports.default.fetch(
    new Request(`https://edgework.test/hooks/${name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "X-Hub-Signature-256": await sign(GITHUB_SECRET, body),
        ...(delivery === null ? {} : { "X-GitHub-Delivery": delivery }),
      },
      body,
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The run a delivery of `body` to `name` starts, when it starts one (its id comes from the body's hash). */
export const runOf = async (name: string, body: string) => runIdFor(name, `sha256:${await sha256Hex(body)}`);

/** The key object of an issue of the fixture repository. */
export const keyOf = (trigger: string, issue: number, repo = "octo/flow") => testFlowKey(env, trigger, [repo, issue]);
