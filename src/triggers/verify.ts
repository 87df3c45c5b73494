import { sameSecret } from "../security/constant-time";
import { hmacSha256 } from "../security/hmac";
import type { HookTrigger } from "./triggers-file";
import { hex } from "../engine/ids";

export type Verification = { ok: true } | { ok: false; reason: string };

const encoder = new TextEncoder();

const base64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Checks a delivery's signature by the trigger's scheme. Every comparison is
 * constant-time; the raw body is what was signed, never a re-serialization.
 */
export async function verifyDelivery(
  t: Pick<HookTrigger, "verify">,
  secret: string,
  headers: Headers,
  body: Uint8Array,
  now = Date.now(),
): Promise<Verification> {
  const v = t.verify;
  switch (v.scheme) {
    case "github": {
      const given = headers.get("X-Hub-Signature-256");
      if (!given) return { ok: false, reason: "missing X-Hub-Signature-256" };
      const expected = `sha256=${hex(await hmacSha256(secret, body))}`;
      if (!(await sameSecret(given, expected))) return { ok: false, reason: "X-Hub-Signature-256 does not match" };
      return { ok: true };
    }
    case "stripe": {
      const header = headers.get("Stripe-Signature");
      if (!header) return { ok: false, reason: "missing Stripe-Signature" };
      const parts = header.split(",").map((p) => p.split("=", 2) as [string, string]);
      const t = parts.find(([k]) => k === "t")?.[1];
      const v1 = parts.filter(([k]) => k === "v1").map(([, s]) => s);
      if (!t || !/^\d+$/.test(t) || !v1.length) return { ok: false, reason: "malformed Stripe-Signature" };
      if (Math.abs(now / 1000 - Number(t)) > v.tolerance_seconds)
        return { ok: false, reason: `Stripe-Signature timestamp is outside the ${v.tolerance_seconds} s tolerance` };
      const expected = hex(await hmacSha256(secret, concat(encoder.encode(`${t}.`), body)));
      let match = false;
      for (const s of v1) match = (await sameSecret(s, expected)) || match; // check all, no early exit
      return match ? { ok: true } : { ok: false, reason: "Stripe-Signature does not match" };
    }
    case "hmac": {
      const given = headers.get(v.header);
      if (!given) return { ok: false, reason: `missing ${v.header}` };
      const mac = await hmacSha256(secret, body);
      const expected = v.prefix + (v.encoding === "hex" ? hex(mac) : base64(mac));
      return (await sameSecret(given, expected)) ? { ok: true } : { ok: false, reason: `${v.header} does not match` };
    }
    case "token": {
      const given = headers.get(v.header);
      if (!given) return { ok: false, reason: `missing ${v.header}` };
      return (await sameSecret(given, secret)) ? { ok: true } : { ok: false, reason: `${v.header} does not match` };
    }
  }
}
