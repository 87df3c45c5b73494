import type { Browser } from "playwright-core";
import PostalMime from "postal-mime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, runBrowser } from "./browser";
import { startModelServer } from "../../src/testing/model-server";
import { startLocalApp } from "../../scripts/demo/local-app.mjs";

type LocalApp = Awaited<ReturnType<typeof startLocalApp>>;

// Set EDGEWORK_SCREENSHOTS=<dir> to keep screenshots of the approval and run pages.

// CI installs Debian's chromium and sets EDGEWORK_REQUIRE_BROWSER=1, so there a missing browser fails.

describe.skipIf(!runBrowser)("approval in a real browser", () => {
  let app: LocalApp;
  let fake: Awaited<ReturnType<typeof startModelServer>>;
  let browser: Browser;

  beforeAll(async () => {
    fake = await startModelServer();
    app = await startLocalApp({
      workerDirs: ["workers", "tests/fixtures/workers"],
      vars: {
        API_TOKEN: "e2e-token",
        OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1`,
        FAKE_OPENAI_HOST: `127.0.0.1:${fake.port}`,
        APPROVAL_FROM: "edgework@example.com",
        APPROVAL_SECRET: "e2e-secret",
      },
    });
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await fake?.close();
  });

  it("opens the link from the sent email, clicks Approve, follows to the run page and sees the run succeeded", async () => {
    const base = `http://127.0.0.1:${fake.port}`;
    await fetch(`${base}/scripts/pause-writer`, {
      method: "PUT",
      body: JSON.stringify([
        { tool_calls: [{ name: "fx_fetch", arguments: { url: `${base}/effects/browser`, method: "POST", body: "<script>alert(1)</script>" } }] },
        { text: "posted after approval" },
      ]),
    });
    const started = await fetch(`${app.url}/runs`, {
      method: "POST",
      headers: { Authorization: "Bearer e2e-token", "content-type": "application/json" },
      body: JSON.stringify({ worker: "pause-writer", input: "post it" }),
    });
    expect(started.status).toBe(202);

    // The real alarm runs the run until it pauses and the email goes out.
    let raw: string | undefined;
    for (let i = 0; i < 80 && !raw; i++) {
      raw = (await app.emails())[0];
      if (!raw) await new Promise((r) => setTimeout(r, 250));
    }
    expect(raw, "an approval email was sent").toBeDefined();
    const mail = await PostalMime.parse(raw!);
    const link = /href="([^"]+\?intent=approve)"/.exec(mail.html!)![1]!;
    expect(link.startsWith(`${app.url}/approvals/`)).toBe(true);

    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (d) => (dialogs.push(d.message()), d.dismiss()));
    await page.goto(link);
    expect(await page.textContent("h1")).toContain("pause-writer wants to call fx_fetch");
    expect(await page.textContent("pre")).toContain("<script>alert(1)</script>"); // shown as text
    const shots = process.env.EDGEWORK_SCREENSHOTS;
    if (shots) await page.screenshot({ path: `${shots}/approval-page.png`, fullPage: true });
    await page.fill("textarea[name=note]", "looks right");
    await page.click("button[value=approve]");
    await page.waitForSelector("text=Approved");
    await page.click("text=See the run");
    await expect.poll(async () => (await page.reload(), await page.textContent("h1")), { timeout: 30_000, interval: 500 }).toContain("succeeded");
    if (shots) await page.screenshot({ path: `${shots}/run-page.png`, fullPage: true });
    expect(await page.textContent("body")).toContain("posted after approval");
    expect(await page.textContent("body")).toContain("looks right");
    expect(dialogs).toEqual([]);
    expect(((await (await fetch(`${base}/effects/browser`)).json()) as { count: number }).count).toBe(1);
  }, 90_000);

  it("edits the call in the form the page makes of the tool's schema: the effect receives the edit, the run page shows both", async () => {
    const base = `http://127.0.0.1:${fake.port}`;
    const before = (await app.emails()).length;
    await fetch(`${base}/scripts/edit-writer`, {
      method: "PUT",
      body: JSON.stringify([
        { tool_calls: [{ name: "fx_fetch", arguments: { url: `${base}/effects/browser-edit`, method: "POST", body: "with a tpyo" } }] },
        { text: "posted the edit" },
      ]),
    });
    const started = await fetch(`${app.url}/runs`, {
      method: "POST",
      headers: { Authorization: "Bearer e2e-token", "content-type": "application/json" },
      body: JSON.stringify({ worker: "edit-writer", input: "post it" }),
    });
    expect(started.status).toBe(202);
    let raw: string | undefined;
    for (let i = 0; i < 80 && !raw; i++) {
      raw = (await app.emails())[before];
      if (!raw) await new Promise((r) => setTimeout(r, 250));
    }
    expect(raw, "an approval email was sent").toBeDefined();
    const link = /href="([^"]+\?intent=edit)"/.exec((await PostalMime.parse(raw!)).html!)![1]!;

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("dialog", (d) => (problems.push(d.message()), d.dismiss()));
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    await page.goto(link);
    // Opened at the edit form: the body's field holds what the model asked.
    expect(await page.isVisible("textarea[name='arg.body']")).toBe(true);
    expect(await page.inputValue("textarea[name='arg.body']")).toBe("with a tpyo");
    expect(await page.inputValue("select[name='arg.method']")).toBe('"POST"');
    const shots = process.env.EDGEWORK_SCREENSHOTS;
    if (shots) await page.screenshot({ path: `${shots}/approval-edit.png`, fullPage: true });
    await page.fill("textarea[name='arg.body']", "with a typo fixed");
    await page.click("button[value=edit]");
    await page.waitForSelector("text=Approved with your edits");
    await page.click("text=See the run");
    await expect.poll(async () => (await page.reload(), await page.textContent("h1")), { timeout: 30_000, interval: 500 }).toContain("succeeded");
    if (shots) await page.screenshot({ path: `${shots}/run-page-edited.png`, fullPage: true });
    const body = (await page.textContent("body"))!;
    expect(body).toContain("with a tpyo");
    expect(body).toContain("edited; ran with:");
    expect(body).toContain("with a typo fixed");
    expect(problems).toEqual([]);
    const effects = (await (await fetch(`${base}/effects/browser-edit/bodies`)).json()) as { bodies: string[] };
    expect(effects.bodies).toEqual(["with a typo fixed"]);
  }, 90_000);
});
