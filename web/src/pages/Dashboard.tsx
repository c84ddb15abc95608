import { useEffect, useId, useRef, useState } from 'react';
import { BarController, BarElement, CategoryScale, Chart, LinearScale, type Plugin } from 'chart.js';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { DashboardQuery } from '../gql/graphql';
import { size } from './filters';
import { errorText } from './ui';

/*
 * The dashboard: `stats` and `analytics` as charts. Chart.js draws on a canvas (no
 * injected style sheet, nothing loaded from elsewhere: the strict CSP holds). Charts are readable
 * without colour: one series per chart, every bar carries its value as text, and each chart has a
 * table with the same figures right below it (the canvas itself is an image named by its summary).
 */

Chart.register(BarController, BarElement, CategoryScale, LinearScale);

const DAYS = 30;

const DashboardDocument = graphql(`
  query Dashboard($range: TimeRange!) {
    stats {
      totalSessions
      totalProjects
      sessionsThisWeek
      totalMarkdownSize
      topLLMModels(limit: 10) {
        model
        count
      }
    }
    analytics(timeRange: $range) {
      totalSessions
      totalProjects
      sessionsByModel {
        model
        count
        totalSize
      }
      sessionsByClient {
        client
        count
        averageSize
      }
      activityByDay {
        date
        sessions
        projects
      }
    }
  }
`);

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

interface Series {
  labels: string[];
  values: number[];
}

/**
 * A bar chart (canvas) with a text alternative: the canvas is an image named by `summary`, and a
 * table holding the same figures follows it.
 */
function BarChart({
  title,
  summary,
  data,
  column,
  format = String,
  horizontal = false,
  pattern,
}: {
  title: string;
  summary: string;
  data: Series;
  column: [string, string];
  format?: (v: number) => string;
  horizontal?: boolean;
  pattern?: boolean;
}) {
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
        layout: { padding: { right: horizontal ? 64 : 8, top: 18 } },
        scales: {
          [horizontal ? 'x' : 'y']: { beginAtZero: true, ticks: { callback: (v: string | number) => format(Number(v)), precision: 0 } },
        },
        plugins: { legend: { display: false }, tooltip: { enabled: false } },
      },
      plugins: [valueLabels(format)],
    });
    return () => chart.destroy();
  }, [data, column, format, horizontal, pattern]);
  const height = horizontal ? Math.max(120, data.labels.length * 28 + 40) : 240;
  return (
    <figure className="chart card" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>
        <h2>{title}</h2>
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

const count = (n: number) => n.toLocaleString('en-US');

export function DashboardPage() {
  const [data, setData] = useState<DashboardQuery | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const end = new Date();
    const start = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate() - (DAYS - 1)));
    gql(DashboardDocument, { range: { start: start.toISOString(), end: end.toISOString() } }).then(setData, (err: unknown) => setError(errorText(err)));
  }, []);

  const s = data?.stats;
  const a = data?.analytics;
  const perDay = useSeries(
    a?.activityByDay,
    (d) => d.date.slice(5),
    (d) => d.sessions,
  );
  const models = useSeries(
    s?.topLLMModels,
    (m) => m.model,
    (m) => m.count,
  );
  const clients = useSeries(
    a?.sessionsByClient,
    (c) => c.client,
    (c) => c.count,
  );
  const modelSizes = useSeries(
    a?.sessionsByModel,
    (m) => m.model,
    (m) => m.totalSize,
  );
  const clientSizes = useSeries(
    a?.sessionsByClient,
    (c) => c.client,
    (c) => Math.round(c.averageSize),
  );

  return (
    <>
      <h1>Dashboard</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!data ? (
        !error && <p role="status">Loading figures…</p>
      ) : (
        <>
          <dl className="totals" aria-label="Totals">
            <div className="card">
              <dt>Sessions</dt>
              <dd>{count(s!.totalSessions)}</dd>
            </div>
            <div className="card">
              <dt>Projects</dt>
              <dd>{count(s!.totalProjects)}</dd>
            </div>
            <div className="card">
              <dt>Sessions this week</dt>
              <dd>{count(s!.sessionsThisWeek)}</dd>
            </div>
            <div className="card">
              <dt>Markdown stored</dt>
              <dd>{size(s!.totalMarkdownSize)}</dd>
            </div>
          </dl>
          <BarChart
            title={`Sessions per day, last ${DAYS} days`}
            summary={`${count(a!.totalSessions)} sessions in ${count(a!.totalProjects)} projects; busiest day ${busiest(a!.activityByDay)}`}
            data={perDay}
            column={['Day', 'Sessions']}
            format={count}
          />
          <BarChart title="Top models" summary={top(models, count)} data={models} column={['Model', 'Sessions']} format={count} horizontal />
          <BarChart
            title={`Clients, last ${DAYS} days`}
            summary={top(clients, count)}
            data={clients}
            column={['Client', 'Sessions']}
            format={count}
            horizontal
            pattern
          />
          <BarChart
            title={`Markdown size by model, last ${DAYS} days`}
            summary={top(modelSizes, size)}
            data={modelSizes}
            column={['Model', 'Total size']}
            format={size}
            horizontal
          />
          <BarChart
            title={`Average session size by client, last ${DAYS} days`}
            summary={top(clientSizes, size)}
            data={clientSizes}
            column={['Client', 'Average size']}
            format={size}
            horizontal
            pattern
          />
        </>
      )}
    </>
  );
}

function useSeries<T>(rows: T[] | undefined, label: (r: T) => string, value: (r: T) => number): Series {
  const [series, setSeries] = useState<Series>({ labels: [], values: [] });
  useEffect(() => {
    if (rows) setSeries({ labels: rows.map(label), values: rows.map(value) });
    // label/value are inline lambdas: follow the rows only.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [rows]);
  return series;
}

const top = (s: Series, format: (v: number) => string) =>
  s.labels.length === 0
    ? 'no data'
    : s.labels
        .slice(0, 3)
        .map((l, i) => `${l} ${format(s.values[i])}`)
        .join(', ') + (s.labels.length > 3 ? ', …' : '');

function busiest(days: Array<{ date: string; sessions: number }>): string {
  const best = days.reduce<{ date: string; sessions: number } | null>((b, d) => (!b || d.sessions > b.sessions ? d : b), null);
  return best && best.sessions > 0 ? `${best.date} with ${count(best.sessions)}` : 'none';
}
