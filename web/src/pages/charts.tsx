import { useEffect, useId, useRef, useState } from 'react';
import { BarController, BarElement, CategoryScale, Chart, LinearScale, type Plugin } from 'chart.js';

/*
 * Bar charts of the console (the dashboard, a team's usage). Chart.js draws on a canvas (no
 * injected style sheet, nothing loaded from elsewhere: the strict CSP holds). Charts are readable
 * without colour: one series per chart, every bar carries its value as text, and each chart has a
 * table with the same figures right below it (the canvas itself is an image named by its summary).
 * Pages that show charts are loaded as chunks of their own, so Chart.js comes only with them.
 */

Chart.register(BarController, BarElement, CategoryScale, LinearScale);

/** Writes each bar's value at its end, so no figure depends on colour or on reading the axis. */
const valueLabels = (format: (v: number) => string): Plugin<'bar'> => ({
  id: 'valueLabels',
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    const horizontal = chart.options.indexAxis === 'y';
    ctx.save();
    ctx.fillStyle = '#1b1f24';
    ctx.font = '12px system-ui, sans-serif';
    chart.getDatasetMeta(0).data.forEach((bar, i) => {
      const v = chart.data.datasets[0].data[i] as number;
      if (!v) return;
      const { x, y } = bar.getProps(['x', 'y'], true) as { x: number; y: number };
      ctx.textAlign = horizontal ? 'left' : 'center';
      ctx.textBaseline = horizontal ? 'middle' : 'bottom';
      ctx.fillText(format(v), horizontal ? x + 4 : x, horizontal ? y : y - 2);
    });
    ctx.restore();
  },
});

export interface Series {
  labels: string[];
  values: number[];
}

/**
 * A bar chart (canvas) with a text alternative: the canvas is an image named by `summary`, and a
 * table holding the same figures follows it.
 */
export function BarChart({
  title,
  summary,
  data,
  column,
  format = String,
  horizontal = false,
  pattern,
  level = 2,
  whole = true,
}: {
  title: string;
  summary: string;
  data: Series;
  column: [string, string];
  format?: (v: number) => string;
  horizontal?: boolean;
  pattern?: boolean;
  /** The title's heading level (2 on a page of its own, 3 or 4 within a section). */
  level?: 2 | 3 | 4;
  /** Axis ticks at whole numbers only (counts); false for amounts like dollars. */
  whole?: boolean;
}) {
  const Heading = `h${level}` as const;
  const ref = useRef<HTMLCanvasElement>(null);
  const id = useId();
  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const fill = pattern ? hatch(canvas) : '#2563eb';
    const chart = new Chart(canvas, {
      type: 'bar',
      data: { labels: data.labels, datasets: [{ label: column[1], data: data.values, backgroundColor: fill, borderColor: '#1e3a8a', borderWidth: 1 }] },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        // Room for the last bar's value label (centred on the bar, so half of it past the bar).
        layout: { padding: { right: horizontal ? 64 : 32, top: 18 } },
        scales: {
          [horizontal ? 'x' : 'y']: { beginAtZero: true, ticks: { callback: (v: string | number) => format(Number(v)), ...(whole ? { precision: 0 } : {}) } },
        },
        plugins: { legend: { display: false }, tooltip: { enabled: false } },
      },
      plugins: [valueLabels(format)],
    });
    return () => chart.destroy();
  }, [data, column, format, horizontal, pattern, whole]);
  const height = horizontal ? Math.max(120, data.labels.length * 28 + 40) : 240;
  return (
    <figure className="chart card" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>
        <Heading>{title}</Heading>
      </figcaption>
      {data.labels.length === 0 ? (
        <p className="muted">No data yet.</p>
      ) : (
        <>
          {/* Sized through the CSSOM (React's style prop), which the CSP's style-src allows. */}
          <div className="chart-box" style={{ height }}>
            <canvas ref={ref} role="img" aria-label={`${title}: ${summary}`} />
          </div>
          <details>
            <summary>{`${title} as a table`}</summary>
            <table>
              <caption className="visually-hidden">{title}</caption>
              <thead>
                <tr>
                  <th scope="col">{column[0]}</th>
                  <th scope="col">{column[1]}</th>
                </tr>
              </thead>
              <tbody>
                {data.labels.map((l, i) => (
                  <tr key={`${l}-${i}`}>
                    <th scope="row">{l}</th>
                    <td>{format(data.values[i])}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </figure>
  );
}

/** Diagonal hatching: a second chart style that does not rely on hue. */
function hatch(canvas: HTMLCanvasElement): CanvasPattern | string {
  const tile = document.createElement('canvas');
  tile.width = 8;
  tile.height = 8;
  const c = tile.getContext('2d');
  const main = canvas.getContext('2d');
  if (!c || !main) return '#059669';
  c.fillStyle = '#d1fae5';
  c.fillRect(0, 0, 8, 8);
  c.strokeStyle = '#065f46';
  c.lineWidth = 2;
  c.beginPath();
  c.moveTo(0, 8);
  c.lineTo(8, 0);
  c.stroke();
  return main.createPattern(tile, 'repeat') ?? '#059669';
}

export function useSeries<T>(rows: T[] | undefined, label: (r: T) => string, value: (r: T) => number): Series {
  const [series, setSeries] = useState<Series>({ labels: [], values: [] });
  useEffect(() => {
    if (rows) setSeries({ labels: rows.map(label), values: rows.map(value) });
    // label/value are inline lambdas: follow the rows only.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [rows]);
  return series;
}

export const top = (s: Series, format: (v: number) => string) =>
  s.labels.length === 0
    ? 'no data'
    : s.labels
        .slice(0, 3)
        .map((l, i) => `${l} ${format(s.values[i])}`)
        .join(', ') + (s.labels.length > 3 ? ', …' : '');
