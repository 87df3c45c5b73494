#!/usr/bin/env node
// The `edgework` command, run in a user's project (paths are relative to the
// working directory). Exit code 1 on any problem, 2 on a usage error.
import { buildArgs } from "../cli/build-args.mjs";
import { bundleCatalog, checkCatalog } from "../cli/catalog.mjs";
import { devCommand } from "../cli/dev.mjs";
import { devBanner, strictLocal } from "../cli/dev-rules.mjs";
import { doctorCommand } from "../cli/doctor.mjs";
import { evalCommand } from "../cli/eval.mjs";
import { newWorker } from "../cli/new-worker.mjs";
import { workerSchemaText, writeWorkerSchema } from "../cli/schema.mjs";

const HELP = `edgework <command>

  build [folder...]     check the catalog (workers/) and bundle it into src/edgework.generated.ts
                        (files and wrangler.toml's var names, for createApp);
                        for wrangler.toml:  [build] command = "edgework build"
                        --out <file>: bundle elsewhere; --functions <module>: the code functions
                        (default src/functions/index.ts); --toolsets <module>: the app's own kinds
                        (default src/toolsets/index.ts, exporting toolsets); --workers <a,b> or folders as arguments
                        or EDGEWORK_WORKER_DIRS (a,b): the catalog's folders
  check [folder...]     list every problem of the catalog and wrangler.toml's crons; exit code 1 if any
  new worker <name>     write workers/<name>.worker from a template (never over an existing file)
  schema [--stdout]     write schemas/worker.schema.json (the editor JSON Schema of worker files), or print it
  eval [worker]         run the suites in evals/*.yaml (docs/evals.md); exit code 1 under a threshold
  doctor                what production will refuse or lack (wrangler configuration, secrets, email, queues),
                        each problem with its fix; exit code 1 if any. --token <t> (or CLOUDFLARE_API_TOKEN):
                        also ask the account (verified addresses, Email Sending, queues, secrets);
                        --account-id <id>, --api-base <url>

  dev [wrangler args]   wrangler dev in the strict local mode (STRICT_LOCAL=true unless .dev.vars says
                        otherwise: mail only to EMAIL_ALLOWED_RECIPIENTS, our Message-IDs replaced), after
                        saying which of production's rules it enforces and which it does not
  dev-rules             that list alone

  --help                this text`;

const commands = {
  async build(args) {
    console.log(await bundleCatalog({ ...buildArgs(args), crons: true }));
  },
  async check(args) {
    const { dirs, functions, toolsets } = buildArgs(args);
    const { problems, summary } = await checkCatalog({ dirs, functions, toolsets });
    if (!problems.length) return console.log(summary);
    console.error(problems.join("\n"));
    process.exitCode = 1;
  },
  async new(args) {
    if (args[0] !== "worker" || args.length !== 2) return usage("usage: edgework new worker <name>");
    console.log(`wrote ${newWorker(args[1])}`);
  },
  eval: evalCommand,
  doctor: doctorCommand,
  dev: devCommand,
  async "dev-rules"(args) {
    console.log(devBanner(strictLocal(args)));
  },
  async schema(args) {
    if (args.includes("--stdout")) return void process.stdout.write(await workerSchemaText());
    console.log(`wrote ${await writeWorkerSchema()}`);
  },
};

function usage(message) {
  console.error(`${message}\n\n${HELP}`);
  process.exitCode = 2;
}

const [name, ...args] = process.argv.slice(2);
if (!name || name === "--help" || name === "-h" || name === "help") console.log(HELP);
else if (!Object.hasOwn(commands, name)) usage(`unknown command "${name}"`);
else {
  try {
    await commands[name](args);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  }
}
