/**
 * The path the app is mounted under in the Worker (createApp's `basePath`, e.g. `/agents`;
 * empty at the root). Every link the app makes — pages, forms, redirects, approval
 * emails, status URLs — and its cookies' Path go through it. Per isolate, like the deploy.
 */
let base = "";

/** `/agents`-like: segments of URL-safe characters (never `.` or `..`), no trailing slash; "" or "/" is the root. */
const BASE_PATH = /^(\/(?!\.{1,2}(\/|$))[A-Za-z0-9._~-]+)+$/;

export function installBasePath(path: string | undefined): void {
  const given = path ?? "";
  if (given !== "" && given !== "/" && !BASE_PATH.test(given)) {
    throw new Error(
      `createApp: basePath ${JSON.stringify(given)} must look like "/agents" (segments of letters, digits, ".", "_", "~", "-"; no trailing slash)`,
    );
  }
  base = given === "/" ? "" : given;
}

/** The mount point, "" at the root. */
export const basePath = (): string => base;

/** An app path (`/runs/x/view`) as the browser must ask for it (`/agents/runs/x/view`). */
export const appPath = (path: string): string => `${base}${path}`;
