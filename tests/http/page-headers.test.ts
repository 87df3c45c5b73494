import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signApprovalToken } from "../../src/tokens/approval-token";
import { RUN_LIVE_SCRIPT } from "../../src/views/run-live-script";
import { effectUrl, script, settle } from "../durable-objects/helpers";

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));
const postForm = (path: string, fields: Record<string, string>) =>
  call(path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

async function pausedRun(): Promise<{ id: string; token: string }> {
  await script("pause-writer", [{ tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl("page-headers"), method: "POST" } }] }, { text: "done" }]);
  const res = await call("/runs", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ worker: "pause-writer", input: "post" }),
  });
  const { id } = (await res.json()) as { id: string };
  const approval = (await settle(id)).approvals[0]!;
  return { id, token: await signApprovalToken({ run: id, approval: approval.id, exp: approval.expires_at }, env.APPROVAL_SECRET!) };
}

const sha256Base64 = async (text: string) =>
  btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))));

/** The headers every page carrying a capability token must send, and a CSP that admits exactly the page's own style. */
async function expectProtected(res: Response, what: string, script?: string) {
  expect(res.headers.get("Referrer-Policy"), what).toBe("no-referrer");
  expect(res.headers.get("X-Content-Type-Options"), what).toBe("nosniff");
  expect(res.headers.get("Cache-Control"), what).toBe("no-store");
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  const directives = new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
  expect(directives.get("default-src"), what).toEqual(["'none'"]);
  expect(directives.get("form-action"), what).toEqual(["'self'"]);
  expect(directives.get("frame-ancestors"), what).toEqual(["'none'"]);
  expect(directives.get("base-uri"), what).toEqual(["'none'"]);
  // No script at all (default-src 'none' applies) — but the live run page's one script, by hash.
  expect(directives.get("script-src"), what).toEqual(script ? [`'sha256-${await sha256Base64(script)}'`] : undefined);
  const html = await res.text();
  if (script)
    expect(
      [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]),
      what,
    ).toEqual([script]);
  const styles = [...html.matchAll(/<style>([^<]*)<\/style>/g)].map((m) => m[1]!);
  expect(styles, what).toHaveLength(1);
  for (const style of styles) expect(directives.get("style-src"), what).toContain(`'sha256-${await sha256Base64(style)}'`);
}

describe("pages that carry capability tokens", () => {
  it("every page — approval GET and POST, problems, the run page — sends CSP, no-referrer, nosniff, no-store", async () => {
    const { id, token } = await pausedRun();
    await expectProtected(await call(`/approvals/${token}`), "approval page");
    await expectProtected(await call(`/approvals/not-a-token`), "approval link problem (403)");
    await expectProtected(await postForm(`/approvals/${token}`, { decision: "maybe" }), "no decision (400)");
    await expectProtected(await postForm(`/approvals/${token}`, { decision: "approve" }), "decision page");
    await expectProtected(await postForm(`/approvals/${token}`, { decision: "approve" }), "already decided (409)");
    await expectProtected(await call(`/runs/${id}/view?token=${encodeURIComponent(token)}`), "run page by link", RUN_LIVE_SCRIPT);
    await expectProtected(await call(`/runs/${id}/view`, { headers: auth }), "run page by API token", RUN_LIVE_SCRIPT);
    await expectProtected(await call(`/runs/${id}/view`), "run page refused (403)");
  });
});
