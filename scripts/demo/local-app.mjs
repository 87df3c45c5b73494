// Starts the app under `wrangler dev` on 127.0.0.1 (local workerd, embedded SQLite
// Durable Objects) and reads the emails it sends locally. Used by `npm start` and
// the end-to-end tests; everything stays on loopback.
import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** @returns {Promise<number>} a free TCP port on 127.0.0.1 */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/**
 * @param {{ vars: Record<string, string>, workerDirs?: string[], port?: number, state?: string }} opts
 *   `vars` are passed with --var (PUBLIC_URL defaults to the app's URL); `workerDirs` choose the bundled catalog;
 *   `state`: the folder of a stopped app's state, to start it again on the same port (a restart).
 * @returns {Promise<{ url: string, port: number, state: string, emails(): Promise<string[]>, log(): string, stop(): Promise<void> }>}
 */
export async function startLocalApp(opts) {
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const state = opts.state ?? (await mkdtemp(join(tmpdir(), "edgework-")));
  const vars = { PUBLIC_URL: url, ...opts.vars };
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(await freePort()),
    "--persist-to",
    state,
    "--show-interactive-dev-session=false",
  ];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child = spawn("node_modules/.bin/wrangler", args, {
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      EDGEWORK_WORKER_DIRS: (opts.workerDirs ?? ["workers"]).join(","),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${log}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not start within 60 s:\n${log}`);
    }
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    port,
    state,
    log: () => log,
    async emails() {
      const paths = [...log.matchAll(/send_email binding called with the following message:\s+(\S+\.eml)/g)].map((m) => m[1]);
      return Promise.all(paths.map((p) => readFile(p, "utf8")));
    },
    stop,
  };
}
