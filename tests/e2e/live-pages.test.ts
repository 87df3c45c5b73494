import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, runBrowser } from "./browser";
import { startModelServer } from "../../src/testing/model-server";
import { startLocalApp } from "../../scripts/demo/local-app.mjs";

type Dom = { document: { getElementById(id: string): { textContent: string } | null } };
/** Waits until element `id` reads `want`. A function predicate (a string one would need eval, which the page's CSP refuses). */
const waitText = (page: Page, id: string, want: string) =>
  page.waitForFunction(([i, w]) => (globalThis as unknown as Dom).document.getElementById(i!)?.textContent === w, [id, want], { timeout: 30_000 });

type LocalApp = Awaited<ReturnType<typeof startLocalApp>>;

// Screenshots go to EDGEWORK_SCREENSHOTS=<dir> (default /tmp): login, inbox, the run page streaming and done.
const SHOTS = process.env.EDGEWORK_SCREENSHOTS ?? "/tmp";

type Dispatch = "direct" | "queue";

describe.skipIf(!runBrowser)("pages for people in a real browser", () => {
  /** The app in each model dispatch mode: direct streams from the run's object, queue through the queue's consumer. */
  const apps = {} as Record<Dispatch, LocalApp>;
  let fake: Awaited<ReturnType<typeof startModelServer>>;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    fake = await startModelServer();
    const start = (dispatch: Dispatch) =>
      startLocalApp({
        workerDirs: ["workers", "tests/fixtures/workers"],
        vars: {
          MODEL_DISPATCH: dispatch,
          API_TOKEN: "e2e-token",
          OPENAI_BASE_URL: `http://127.0.0.1:${fake.port}/v1`,
          FAKE_OPENAI_HOST: `127.0.0.1:${fake.port}`,
          APPROVAL_SECRET: "e2e-secret",
        },
      });
    [apps.direct, apps.queue] = await Promise.all([start("direct"), start("queue")]);
    browser = await launchChromium();
    context = await browser.newContext();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(Object.values(apps).map((app) => app.stop()));
    await fake?.close();
  });

  it("the inbox sends a stranger to the login form; the API token there signs in and shows the inbox", async () => {
    const app = apps.direct;
    const page = await context.newPage();
    await page.goto(`${app.url}/inbox`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.screenshot({ path: `${SHOTS}/edgework-login.png`, fullPage: true });
    await page.fill("input[name=token]", "wrong");
    await page.click("button[type=submit]");
    expect(await page.textContent("body")).toContain("That is not the API token.");
    await page.fill("input[name=token]", "e2e-token");
    await page.click("button[type=submit]");
    await page.waitForURL(`${app.url}/inbox`);
    expect(await page.textContent("h1")).toContain("Waiting for a decision");
    await page.screenshot({ path: `${SHOTS}/edgework-inbox.png`, fullPage: true });
  });

  it.each(["direct", "queue"] as const)(
    "a run page opened before the last step shows the streamed answer in pieces, then the step and the final status, without a reload (MODEL_DISPATCH=%s)",
    async (dispatch) => {
      const app = apps[dispatch];
      // Screenshots of the queue mode's page get their own names.
      const shot = (name: string) => `${SHOTS}/edgework-run-${name}${dispatch === "queue" ? "-queue" : ""}.png`;
      const base = `http://127.0.0.1:${fake.port}`;
      await fetch(`${base}/scripts/live-writer`, {
        method: "PUT",
        body: JSON.stringify([
          { tool_calls: [{ name: "fx_fetch", arguments: { url: `${base}/effects/live-page` } }] },
          {
            text: "Drafting the answer, then <b>finishing</b> it.",
            chunks: ["Drafting the answer, ", "then <b>finishing</b> it."],
            gate: `e2e-live-${dispatch}`,
          },
        ]),
      });
      const started = await fetch(`${app.url}/runs`, {
        method: "POST",
        headers: { Authorization: "Bearer e2e-token", "content-type": "application/json" },
        body: JSON.stringify({ worker: "live-writer", input: "go" }),
      });
      const { id } = (await started.json()) as { id: string };
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      await page.goto(`${app.url}/runs/${id}/view`);
      await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));

      // The model holds its answer after the first piece: it is on the page (in queue mode forwarded by the
      // consumer to the run's object), the step is not recorded.
      await waitText(page, "streaming", "Drafting the answer, ");
      expect(await page.textContent("#activity")).not.toContain("Drafting");
      expect(await page.textContent("#run-status")).toBe("running");
      await page.screenshot({ path: shot("streaming"), fullPage: true });

      await fetch(`${base}/gates/e2e-live-${dispatch}`, { method: "POST" });
      await waitText(page, "run-status", "succeeded");
      const activity = await page.textContent("#activity");
      expect(activity).toContain("Drafting the answer, then <b>finishing</b> it."); // as text, never markup
      expect(activity).toContain("calls fx_fetch");
      expect(await page.textContent("#streaming")).toBe("");
      expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true); // never reloaded
      await page.screenshot({ path: shot("done"), fullPage: true });
      expect(errors).toEqual([]); // no CSP violation, no script error
    },
  );
});
