// `npm pack` of one package folder into `dest` (its prepack runs), then one line:
// the tarball's name, file count and sizes.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

const [folder, dest] = process.argv.slice(2);
// npm pack runs in `folder`: a relative destination is the caller's.
const out = execFileSync("npm", ["pack", "--json", "--pack-destination", resolve(dest)], {
  cwd: folder,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
});
// prepack's own output comes first on stdout; the JSON array starts on a line of its own.
const [packed] = JSON.parse(out.slice(out.search(/^\[/m)));
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(`${packed.filename}: ${packed.entryCount} files, ${kib(packed.size)} packed, ${kib(packed.unpackedSize)} unpacked`);
