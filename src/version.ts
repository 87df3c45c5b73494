// Written by scripts/sync-version.mjs from package.json's "version" (npm version runs it;
// tests/node/version.test.ts checks they agree). A constant compiled into the bundle:
// workerd has no package.json to read at runtime.
/** The edgework package version this code is. */
export const EDGEWORK_VERSION = "0.1.0";
