import type { Child } from "hono/jsx";

/** The pages' one stylesheet; the page-headers middleware admits exactly it, by hash, in the CSP. */
export const PAGE_STYLE = `
body{font-family:system-ui,sans-serif;color:#1a1a1a;max-width:860px;margin:2rem auto;padding:0 1rem;line-height:1.45}
h1{font-size:1.35rem} h2{font-size:1.1rem;margin-top:1.6rem}
code,pre{font-family:ui-monospace,monospace;font-size:.9rem}
pre{background:#f4f4f5;padding:.75rem;border-radius:6px;white-space:pre-wrap;word-break:break-word}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:999px;background:#e4e4e7;font-size:.85rem}
.succeeded,.approved,.ok{background:#dcfce7}.failed,.rejected,.error,.expired{background:#fee2e2}
.awaiting_approval,.pending{background:#fef9c3}.waiting{background:#e0f2fe}.cancelled,.voided{background:#e4e4e7}
button{font-size:1rem;padding:.55rem 1.1rem;border-radius:6px;border:0;color:#fff;cursor:pointer;margin-right:.5rem}
.approve{background:#15803d}.reject{background:#b91c1c}.primary{outline:3px solid #93c5fd}
textarea{width:100%;min-height:4rem;font:inherit}input[type=text]{width:100%;font:inherit}.hint{color:#52525b}
.responded{background:#e0e7ff}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e4e4e7;vertical-align:top}
ul.tree{list-style:none;padding-left:1.1rem;border-left:2px solid #e4e4e7}
nav{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}form.inline{display:inline;margin-left:auto}
#streaming:empty{display:none}details summary{cursor:pointer;color:#52525b}
`;

/** The frame of every page: no script, nothing loaded from elsewhere (the CSP enforces it). */
export function Page(props: { title: string; refresh?: boolean; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        {/* Without JS a live page refreshes itself; with it, its script follows the run. */}
        {props.refresh ? (
          <noscript>
            <meta http-equiv="refresh" content="3" />
          </noscript>
        ) : null}
        <title>{props.title}</title>
        <style>{PAGE_STYLE}</style>
      </head>
      <body>{props.children}</body>
    </html>
  );
}

export const Badge = (props: { status: string }) => <span class={`badge ${props.status}`}>{props.status.replace(/_/g, " ")}</span>;

/** A page that says why a link cannot be used. */
export function Problem(props: { title: string; message: string; runLink?: string }) {
  return (
    <Page title={props.title}>
      <h1>{props.title}</h1>
      <p>{props.message}</p>
      {props.runLink ? (
        <p>
          <a href={props.runLink}>See the run</a>
        </p>
      ) : null}
    </Page>
  );
}
