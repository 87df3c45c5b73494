// What `npm run dev` (local workerd) enforces of production's rules, said at its start.
// The one list of them: whoever makes local dev emulate a rule moves it from NOT_EMULATED
// to EMULATED, naming what does it (docs/operate.md lists the same rules for readers).

/** Production rules local dev enforces as Cloudflare does: `{ rule, by }`. */
export const EMULATED = [{ rule: "SQLite LIKE/GLOB patterns of at most 50 bytes", by: "workerd itself" }];

/** Production rules local dev does not enforce: code that passes here may still fail there. */
export const NOT_EMULATED = [
  "send_email delivers only to verified destination addresses, unless the sending domain is onboarded to Email Sending",
  "Email Sending replaces the Message-ID of outgoing mail",
  "at most six connections wait for response headers at once per invocation",
  "CPU time ([limits] cpu_ms), 128 MB of memory and an alarm's 15-minute wall time end a handler without a catch; a failing alarm is retried about six times, then dropped",
  "Workers Free: 10 ms CPU and 50 subrequests per invocation",
];

/** The banner: plainly whether dev is as strict as production, and rule by rule. */
export function devBanner() {
  const lines = [
    NOT_EMULATED.length
      ? "edgework dev: local workerd is NOT as strict as Cloudflare. These production rules are not enforced here:"
      : "edgework dev: every production rule edgework knows of is enforced here.",
    ...NOT_EMULATED.map((r) => `  ✗ ${r}`),
  ];
  if (EMULATED.length) lines.push("Enforced here as in production:", ...EMULATED.map((r) => `  ✓ ${r.rule} (${r.by})`));
  lines.push("Before a deploy: npx edgework doctor (what production will refuse or lack; docs/operate.md).");
  return lines.join("\n");
}
