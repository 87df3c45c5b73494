import { env } from "cloudflare:workers";

// The receiver of docs/triggers.md ("Completion webhooks"), as written there: the tests check edgework's signature with it.
const TOLERANCE_S = 300;

/** Checks an edgework completion webhook; returns its event, or null when it is not genuine. */
export async function verifiedEvent(request: Request, secret: string): Promise<{ id: string; type: string; run: { id: string; status: string } } | null> {
  const body = await request.text(); // the raw body: the signature covers it byte for byte
  const fields = new Map((request.headers.get("Edgework-Signature") ?? "").split(",").map((f) => f.split("=", 2) as [string, string]));
  const t = Number(fields.get("t"));
  const v1 = fields.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > TOLERANCE_S || !/^[0-9a-f]{64}$/.test(v1)) return null;
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const mac = Uint8Array.from(v1.match(/../g)!, (byte) => parseInt(byte, 16));
  const genuine = await crypto.subtle.verify("HMAC", key, mac, new TextEncoder().encode(`${t}.${body}`)); // constant time
  return genuine ? JSON.parse(body) : null;
}

/** What the test receiver (tests/support/notify-receiver.ts) took for `name`, as requests a receiver would read. */
export async function received(name: string): Promise<Array<{ request: () => Request; headers: Record<string, string>; body: string }>> {
  const { requests } = (await (await fetch(`${env.NOTIFY_RECEIVER_URL}/hook/${name}`)).json()) as {
    requests: Array<{ headers: Record<string, string>; body: string }>;
  };
  const kept = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => !["host", "content-length", "connection"].includes(k)));
  return requests.map((r) => ({ ...r, request: () => new Request("https://receiver.test/", { method: "POST", headers: kept(r.headers), body: r.body }) }));
}

/** What the receiver answers for `name`, request after request (`"hang"`: never; `"redirect"`: 302). */
export async function plan(name: string, answers: Array<number | string>): Promise<void> {
  await fetch(`${env.NOTIFY_RECEIVER_URL}/plan/${name}`, { method: "PUT", body: JSON.stringify(answers) });
}

export const hookUrl = (name: string) => `${env.NOTIFY_RECEIVER_URL}/hook/${name}`;
