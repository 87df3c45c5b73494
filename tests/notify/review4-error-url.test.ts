import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { script, settle, stub } from "../durable-objects/helpers";
import { hookUrl, plan } from "./receiver";

const auth = { Authorization: "Bearer test-token", "content-type": "application/json" };

/**
 * A run records where it posted as an origin only: a notify URL's path or query may carry a
 * token (a trigger's `${NAME}` filled from the app's secrets). The error text of a failed attempt
 * must not bring it back — e.g. a receiver's relative redirect, which the error shows resolved.
 */
describe("a failed completion webhook's error", () => {
  it("never shows the notify URL's path or query (a relative redirect resolved against it)", async () => {
    await plan("leaky", ["redirect-relative"]);
    await script("flow-echo", [{ text: "done" }]);
    const url = `${hookUrl("leaky")}/path-token-s3cr3t?key=query-s3cr3t`;
    const res = await exports.default.fetch(
      new Request("https://edgework.test/runs", {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ worker: "flow-echo", input: { title: "t" }, notify_url: url }),
      }),
    );
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await settle(id);
    const events = (await stub(id).eventsSince("0-0", 500))!.events.filter((e) => e.type.startsWith("notify_"));
    expect(events).toMatchObject([{ type: "notify_failed", data: { retry: false, error: expect.stringContaining("redirects are not followed") } }]);
    const shown = JSON.stringify(events);
    expect(shown).not.toContain("s3cr3t");
  });
});
