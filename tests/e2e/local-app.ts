import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface LocalApp {
  url: string;
  /** Raw MIME of every email the app sent, in order (read from the files wrangler dev writes). */
  emails(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * `wrangler dev` on 127.0.0.1 with a throwaway state folder. `vars` are passed with
 * --var; `workerDirs` choose the bundled catalog. Everything stays on loopback.
 */
export async function startLocalApp(opts: { vars: Record<string, string>; workerDirs?: string[] }): Promise<LocalApp> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const state = await mkdtemp(join(tmpdir(), "edgework-e2e-"));
  const vars = { PUBLIC_URL: url, ...opts.vars };
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(await freePort()), "--persist-to", state, "--show-interactive-dev-session=false"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child: ChildProcess = spawn("node_modules/.bin/wrangler", args, {
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", EDGEWORK_WORKER_DIRS: (opts.workerDirs ?? ["workers"]).join(",") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${log}`);
    if (Date.now() > deadline) throw new Error(`wrangler dev did not start:\n${log}`);
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    async emails() {
      const paths = [...log.matchAll(/send_email binding called with the following message:\s+(\S+\.eml)/g)].map((m) => m[1]!);
      return Promise.all(paths.map((p) => readFile(p, "utf8")));
    },
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
    },
  };
}
