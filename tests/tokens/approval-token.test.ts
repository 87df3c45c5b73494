import { describe, expect, it } from "vitest";
import { fromBase64Url, toBase64Url } from "../../src/tokens/base64url";
import { signApprovalToken, verifyApprovalToken } from "../../src/tokens/approval-token";

const secret = "s3cret";
const payload = { run: "run-1", approval: "ap_1", exp: Date.now() + 60_000 };

/** Flips one character of a base64url string to another valid one. */
const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);

describe("ApprovalToken", () => {
  it("round-trips: a token made with the secret verifies and yields its payload", async () => {
    const token = await signApprovalToken(payload, secret);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await verifyApprovalToken(token, secret)).toEqual({ ok: true, payload });
  });

  it("a tampered payload is refused (403)", async () => {
    const [body, mac] = (await signApprovalToken(payload, secret)).split(".");
    const forged = toBase64Url(new TextEncoder().encode(JSON.stringify({ ...payload, approval: "ap_other" })));
    expect(await verifyApprovalToken(`${forged}.${mac}`, secret)).toEqual({ ok: false, status: 403, reason: "invalid" });
    expect(await verifyApprovalToken(`${flip(body!, 3)}.${mac}`, secret)).toMatchObject({ status: 403 });
  });

  it("a tampered MAC is refused (403)", async () => {
    const [body, mac] = (await signApprovalToken(payload, secret)).split(".");
    expect(await verifyApprovalToken(`${body}.${flip(mac!, 10)}`, secret)).toMatchObject({ status: 403 });
    expect(await verifyApprovalToken(`${body}.${mac!.slice(0, -2)}`, secret)).toMatchObject({ status: 403 });
    expect(await verifyApprovalToken(`${body}`, secret)).toMatchObject({ status: 403 });
    expect(await verifyApprovalToken(`${body}.${mac}.x`, secret)).toMatchObject({ status: 403 });
    expect(await verifyApprovalToken(`${body}.!!`, secret)).toMatchObject({ status: 403 });
  });

  it("a token made with another secret is refused (403)", async () => {
    expect(await verifyApprovalToken(await signApprovalToken(payload, "other"), secret)).toMatchObject({ status: 403 });
  });

  it("an expired token is refused (410), and says which run it was for", async () => {
    const token = await signApprovalToken({ ...payload, exp: 1_000 }, secret);
    expect(await verifyApprovalToken(token, secret)).toEqual({ ok: false, status: 410, reason: "expired", payload: { ...payload, exp: 1_000 } });
  });

  it("base64url round-trips bytes", () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(fromBase64Url(toBase64Url(bytes))).toEqual(bytes);
    expect(() => fromBase64Url("a+b/")).toThrow();
  });
});
