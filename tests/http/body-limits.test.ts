import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const auth = { Authorization: "Bearer test-token" };
const MiB = 1024 * 1024;
const call = (path: string, init: RequestInit) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));
const postJson = (path: string, body: BodyInit) => call(path, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body });

/** A body of `size` bytes sent in chunks, without a Content-Length. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, (at += 64 * 1024)));
    },
  });
}

async function expect413(res: Response, pattern: RegExp) {
  expect(res.status).toBe(413);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(((await res.json()) as { error: string }).error).toMatch(pattern);
}

describe("body limits", () => {
  it("POST /runs with a 4–8 MiB input → 413 with a JSON error (declared length or chunked), not 500", async () => {
    for (const size of [4 * MiB, 8 * MiB]) {
      const body = JSON.stringify({ worker: "scoped", input: "x".repeat(size) });
      await expect413(await postJson("/runs", body), /larger than 1048576 bytes/);
      await expect413(await postJson("/runs", chunked(body)), /larger than 1048576 bytes/);
    }
  });

  it("POST /runs whose input grows past the bound when stored (invalid UTF-8 becomes U+FFFD, 1 byte → 3) → 413", async () => {
    const head = new TextEncoder().encode('{"worker":"scoped","input":"');
    const body = new Uint8Array(head.length + 700 * 1024 + 2);
    body.set(head);
    body.fill(0xff, head.length, body.length - 2);
    body.set(new TextEncoder().encode('"}'), body.length - 2);
    await expect413(await postJson("/runs", body), /^the input is \d+ bytes as stored JSON; at most 1048576/);
  });

  it("the decisions API and the approval form refuse a body over 1 MiB with 413", async () => {
    const big = JSON.stringify({ decision: "approve", note: "x".repeat(2 * MiB) });
    await expect413(await postJson("/runs/some-run/approvals/ap_x", big), /larger than 1048576 bytes/);
    await expect413(await postJson("/runs/some-run/approvals/ap_x", chunked(big)), /larger than 1048576 bytes/);
    const form = `decision=approve&note=${"x".repeat(2 * MiB)}`;
    const formInit = (body: BodyInit): RequestInit => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    await expect413(await call("/approvals/any-token", formInit(form)), /larger than 1048576 bytes/);
    await expect413(await call("/approvals/any-token", formInit(chunked(form))), /larger than 1048576 bytes/);
  });
});
