// The size wrangler reports for an upload — `Total Upload: 791.12 KiB / gzip: 246.34 KiB`
// from `wrangler deploy --dry-run` — the whole Worker as the platform counts it against
// its limit (3 MB Free, 10 MB Paid, compressed), not one file gzipped by us.
const LINE = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/;

/** `{ rawKiB, gzipKiB }` from wrangler's output; throws when the line is missing (wrangler changed its wording). */
export function totalUpload(output) {
  const m = LINE.exec(output);
  if (!m) throw new Error(`wrangler printed no "Total Upload: … / gzip: …" line:\n${output.slice(-2000)}`);
  return { rawKiB: Number(m[1]), gzipKiB: Number(m[2]) };
}
