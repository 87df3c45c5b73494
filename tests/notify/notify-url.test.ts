import { describe, expect, it } from "vitest";
import { globalNotify } from "../../src/notify/global";
import { notificationOf } from "../../src/notify/notification";
import { notifyUrlProblem } from "../../src/notify/notify-url";

describe("where a completion webhook may go (no NOTIFY_ALLOW_HOSTS: public https only)", () => {
  it.each([
    ["https://hooks.example.com/edgework?team=a", undefined],
    ["https://hooks.example.com./x", undefined],
    ["http://hooks.example.com/x", /must be https/],
    ["https://hooks.example.com:8443/x", /port 8443; only 443/],
    ["https://127.0.0.1/x", /IP address/],
    ["https://2130706433/x", /IP address/], // 127.0.0.1 as one number
    ["https://0x7f.1/x", /IP address/], // and in hex, short
    ["https://[::1]/x", /IP address/],
    ["https://[::ffff:10.0.0.1]/x", /IP address/],
    ["https://169.254.169.254/latest/meta-data", /IP address/],
    ["https://localhost/x", /not a public name/],
    ["https://api.localhost/x", /local name/],
    ["https://printer.local/x", /local name/],
    ["https://db.internal/x", /local name/],
    ["https://router.home.arpa/x", /local name/],
    ["https://intranet/x", /not a public name/],
    ["https://user@hooks.example.com/x", /credentials/],
    ["https://hooks.example.com/x#frag", /fragment/],
    ["file:///etc/passwd", /scheme is file:/],
    [`https://hooks.example.com/${"a".repeat(2050)}`, /over 2048/],
    [42, /non-empty string/],
  ])("%s → %s", (url, expected) => {
    const problem = notifyUrlProblem(url);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });

  it("NOTIFY_ALLOW_HOSTS: only the hosts listed, over http too; a bad entry refuses every URL, naming it", () => {
    expect(notifyUrlProblem("http://10.0.0.5:8080/hook", "10.0.0.5:8080, *.example.com")).toBeUndefined();
    expect(notifyUrlProblem("https://a.example.com/hook", "10.0.0.5:8080, *.example.com")).toBeUndefined();
    expect(notifyUrlProblem("https://hooks.other.com/hook", "10.0.0.5:8080")).toMatch(/not in NOTIFY_ALLOW_HOSTS \(10\.0\.0\.5:8080\)/);
    expect(notifyUrlProblem("http://10.0.0.5:8081/hook", "10.0.0.5:8080")).toMatch(/not in NOTIFY_ALLOW_HOSTS/);
    expect(notifyUrlProblem("http://u:p@10.0.0.5:8080/hook", "10.0.0.5:8080")).toMatch(/credentials/);
    expect(notifyUrlProblem("https://a.example.com/hook", "https://a.example.com/")).toMatch(/NOTIFY_ALLOW_HOSTS: .*not a URL/);
  });

  it("NOTIFY_URL hears every run's end; NOTIFY_ON adds pauses, and ignores what it does not know", () => {
    expect(globalNotify({})).toBeUndefined();
    expect(globalNotify({ NOTIFY_URL: "https://h.example.com/" })).toEqual({ url: "https://h.example.com/", on: ["ended"] });
    expect(globalNotify({ NOTIFY_URL: "https://h.example.com/", NOTIFY_ON: "ended, paused" })!.on).toEqual(["ended", "paused"]);
    expect(globalNotify({ NOTIFY_URL: "https://h.example.com/", NOTIFY_ON: "sometimes" })!.on).toEqual(["ended"]);
  });
});

describe("the notification's body", () => {
  it("is bounded: an output over 32 KiB is left out (output_truncated), at most 20 of what a pause waits for", () => {
    const run = { id: "r", worker: "w" };
    const big = notificationOf("evt_1", run, { type: "run_succeeded", data: { output: "x".repeat(40_000) }, at: 1 });
    expect(big.run).toEqual({ id: "r", worker: "w", status: "succeeded", output_truncated: true });
    const paused = notificationOf("evt_2", run, { type: "run_waiting", data: { waiting_for: Array.from({ length: 30 }, (_, i) => i) }, at: 1 });
    expect(paused).toMatchObject({ type: "run.paused", run: { status: "waiting" } });
    expect(paused.run.waiting_for).toHaveLength(20);
  });
});
