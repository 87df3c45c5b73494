import type { Span, SpanKind, Timeline } from "../engine/journal/timeline";

/** Colours by span kind (also the legend's). */
const FILL: Record<SpanKind, string> = { worker: "#6b7280", model: "#2563eb", tool: "#059669", pause: "#d97706" };
const LABEL_W = 280;
const CHART_W = 640;
const ROW_H = 18;
const TOP = 22;

/** `ms` for people: 850 ms, 12.4 s, 3.2 min, 5.0 h. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** The run's timeline as a waterfall, drawn by the server as SVG (no script): one row per span, indented by nesting, with totals. */
export function Waterfall(props: { timeline: Timeline }) {
  const { start, end, spans, omitted, totals } = props.timeline;
  const range = Math.max(end - start, 1);
  const x = (t: number) => LABEL_W + ((t - start) / range) * CHART_W;
  const height = TOP + spans.length * ROW_H + 4;
  return (
    <figure id="waterfall">
      {/* As wide as the page (scaled by its viewBox), never wider. */}
      <svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox={`0 0 ${LABEL_W + CHART_W + 8} ${height}`} role="img" aria-label="run timeline">
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <g>
            <line x1={LABEL_W + f * CHART_W} y1={TOP - 6} x2={LABEL_W + f * CHART_W} y2={height} stroke="#e4e4e7" />
            <text x={LABEL_W + f * CHART_W} y={12} font-size="10" fill="#52525b" text-anchor={f === 1 ? "end" : f === 0 ? "start" : "middle"}>
              {duration(f * range)}
            </text>
          </g>
        ))}
        {spans.map((s, i) => (
          <SpanRow span={s} y={TOP + i * ROW_H} x={x} />
        ))}
      </svg>
      <figcaption>
        {Object.entries(FILL).map(([kind, fill]) => (
          <span>
            <svg width="10" height="10" aria-hidden="true">
              <rect width="10" height="10" fill={fill} />
            </svg>{" "}
            {kind}{" "}
          </span>
        ))}
        — wall {duration(totals.wall_ms)}, model requests {duration(totals.model_ms)}, tool calls {duration(totals.tool_ms)}, paused{" "}
        {duration(totals.paused_ms)}
        {omitted ? `; ${omitted} later spans not drawn` : ""}
      </figcaption>
    </figure>
  );
}

function SpanRow(props: { span: Span; y: number; x: (t: number) => number }) {
  const { span: s, y, x } = props;
  const label = s.label.length > 40 ? `${s.label.slice(0, 39)}…` : s.label;
  const left = x(s.start);
  return (
    <g class={`span ${s.kind}`}>
      <title>{`${s.kind} ${s.label}: ${duration(s.end - s.start)}${s.open ? " so far" : ""}${s.path ? ` (${s.path})` : ""}`}</title>
      <text x={4 + s.depth * 12} y={y + 12} font-size="11" fill="#18181b">
        {label}
      </text>
      <rect
        x={left}
        y={y + 3}
        width={Math.max(x(s.end) - left, 2)}
        height={ROW_H - 6}
        rx="2"
        fill={FILL[s.kind]}
        fill-opacity={s.open ? "0.45" : "1"}
        {...(s.open ? { stroke: FILL[s.kind], "stroke-dasharray": "3 2" } : {})}
      />
    </g>
  );
}
