#!/usr/bin/env node
// `npm create edgework@latest <folder>`: a new edgework project. Exit code 1 when the
// folder or its name is refused (nothing written), 2 on a usage error.
import { CreateError, createProject } from "../lib/create-project.mjs";

const USAGE = `usage: npm create edgework@latest <folder>     (or: npx create-edgework <folder>)

Writes an edgework project into <folder> (new, or empty); the folder's name is the package's.`;

const quoted = (path) => (/^[\w./-]+$/.test(path) ? path : JSON.stringify(path));

const nextSteps = (dir, { name, version }) => `Created ${name} (edgework ${version}) in ${dir}.

Next:
  cd ${quoted(dir)}
  npm install
  npm start            the offline demo: a signed webhook, a paused run, its approval link; approve and the comment is posted
  npm test             the triage example's test (edgework/testing, in the Workers vitest pool)
  npx wrangler deploy  when you are ready: see README.md, "Deploy"`;

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--help" || args[0] === "-h")) console.log(USAGE);
else if (args.length !== 1 || args[0].startsWith("-")) {
  console.error(USAGE);
  process.exitCode = 2;
} else {
  try {
    console.log(nextSteps(args[0], createProject(args[0])));
  } catch (err) {
    if (!(err instanceof CreateError)) throw err;
    console.error(`create-edgework: ${err.message}`);
    process.exitCode = 1;
  }
}
