import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's chromium (apt); the browser tests are skipped without it unless EDGEWORK_REQUIRE_BROWSER=1 (CI). */
const CHROMIUM = "/usr/bin/chromium";
export const runBrowser = existsSync(CHROMIUM) || process.env.EDGEWORK_REQUIRE_BROWSER === "1";

/** A headless chromium that reaches nothing but the pages a test opens. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}
