#!/usr/bin/env bash
# The path a user takes, offline (no registry beyond what `npm ci` fetched): pack both
# packages, create a project from the packed scaffolder, install the packed library
# into it, run its tests, typecheck it, run its demo end to end (the run pauses and is
# approved through edgework/client), check its wrangler.toml and doctor, and measure its bundle.
# Usage: scripts/ci-package-flow.sh [result-file]; writes "<passed> <failed>" there
# (.ci/run adds them to its count) and ends with one "package flow: …" line.
# PACKAGE_FLOW_KEEP=1 keeps the temporary folder (the packs and the project) to look at.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
result="${1:-/dev/null}"
work="$(mktemp -d)"
project="$work/my-app"
version="$(node -p "require('$repo/package.json').version")"
passed=0 failed=0
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

finish() {
  echo "$passed $failed" >"$result"
  if [ -n "${PACKAGE_FLOW_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
  if [ "$failed" -eq 0 ]; then echo "package flow: passed ($passed checks)"; else echo "package flow: FAILED ($failed of $((passed + failed)) checks)"; fi
  exit $((failed > 0))
}
# step <name> <command...>: runs it; a failed step ends the flow (the next ones need it).
step() {
  local name="$1"
  shift
  local started=$SECONDS
  echo "── $name"
  if "$@"; then
    passed=$((passed + 1))
    echo "ok: $name ($((SECONDS - started)) s)"
  else
    echo "FAIL: $name ($((SECONDS - started)) s)"
    failed=$((failed + 1))
    finish
  fi
}

pack() { node "$repo/scripts/package-flow/pack.mjs" "$repo" "$work" && node "$repo/scripts/package-flow/pack.mjs" "$repo/create-edgework" "$work"; }
create() { (cd "$work" && npm exec --offline --yes --package="$work/create-edgework-$version.tgz" -- create-edgework my-app); }
install() {
  node "$repo/scripts/package-flow/seed-lockfile.mjs" "$project" &&
    (cd "$project" && npm install --offline --no-audit --no-fund --loglevel=error "../edgework-$version.tgz")
}
in_project() { (cd "$project" && "$@"); }
demo() { cp "$repo/scripts/package-flow/demo-approved.mjs" "$project/" && in_project node demo-approved.mjs; }
# Then its start-up, for the record (module evaluation and first request, one fresh process: bench/startup-probe.mjs).
budget=$(node --input-type=module -e "import { BUNDLE_BUDGET_KIB } from \"$repo/scripts/bundle-budget.mjs\"; console.log(BUNDLE_BUDGET_KIB)")
bundle() { node "$repo/scripts/package-flow/bundle-size.mjs" "$project" "$budget" && echo "startup: $(node "$repo/bench/startup-probe.mjs" "$project/dist/index.js")"; }
# What a user copies patches nothing inside edgework's dependencies: no [alias] table.
no_alias() { if grep -nE '^\s*\[alias\]' "$project/wrangler.toml"; then echo "the scaffolded wrangler.toml has an [alias] table"; return 1; fi; }
# The scaffolded project's first-deploy check: it lists what is missing (exit code 1) and names PUBLIC_URL among it.
doctor() { local out; out="$(cd "$project" && env -u CLOUDFLARE_API_TOKEN npx edgework doctor)"; local code=$?; echo "$out" | tail -3; [ "$code" -eq 1 ] && grep -q "PUBLIC_URL is not set" <<<"$out"; }

step "npm pack edgework and create-edgework" pack
step "create a project from the packed scaffolder" create
step "install the packed library offline" install
step "the project's npm test" in_project npm test
step "the project's npm run typecheck" in_project npm run typecheck
step "the project's demo, approved through edgework/client" demo
step "the project's wrangler.toml has no [alias]" no_alias
step "the project's npx edgework doctor lists what a first deploy lacks" doctor
step "the project's bundle (wrangler's Total Upload) within the budget (scripts/bundle-budget.mjs)" bundle
finish
