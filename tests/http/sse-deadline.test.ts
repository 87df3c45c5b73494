import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/http/app";
import { settle } from "../durable-objects/helpers";

const auth = { Authorization: "Bearer test-token" };

/** Every SSE event in a response body, read to its end. */
async function eventNames(res: Response): Promise<string[]> {
  const text = await res.text();
  return [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

describe("run events (SSE) and a client that never reads", () => {
  it("closes the response at the deadline even while a write waits for the client", async () => {
    const started = await exports.default.fetch(
      new Request("https://edgework.test/runs", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ worker: "scoped", input: "count" }),
      }),
    );
    const { id } = (await started.json()) as { id: string };
    expect((await settle(id)).status).toBe("succeeded");
    const all = await eventNames(await app.request(`/runs/${id}/events`, { headers: auth }, env));
    expect(all.slice(-2)).toEqual(["run_succeeded", "end"]);

    // Nobody reads this response until well past its deadline: a write waits for the reader then.
    // The response must have ended at the deadline, cut short; before the fix that write waited
    // for the reader forever and the whole run arrived once somebody read.
    const unread = await app.request(`/runs/${id}/events`, { headers: auth }, { ...env, SSE_MAX_MS: "20" });
    await new Promise((r) => setTimeout(r, 500));
    const got = await eventNames(unread);
    expect(got.length).toBeLessThan(all.length);
  });
});
