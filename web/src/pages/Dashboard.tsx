import { useEffect, useState } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { DashboardQuery } from '../gql/graphql';
import { BarChart, top, useSeries } from './charts';
import { size } from './filters';
import { errorText } from './ui';
import { UsagePanel } from './Usage';

/*
 * The dashboard: `stats`, `analytics` and `usage` (what the sessions cost) as charts (./charts.tsx).
 */

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
          <UsagePanel days={DAYS} />
        </>
      )}
    </>
  );
}

function busiest(days: Array<{ date: string; sessions: number }>): string {
  const best = days.reduce<{ date: string; sessions: number } | null>((b, d) => (!b || d.sessions > b.sessions ? d : b), null);
  return best && best.sessions > 0 ? `${best.date} with ${count(best.sessions)}` : 'none';
}
