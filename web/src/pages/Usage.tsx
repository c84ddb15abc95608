import { useEffect, useId, useState } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { UsagePanelQuery } from '../gql/graphql';
import { BarChart, top, useSeries, type Series } from './charts';
import { errorText } from './ui';

/*
 * What the sessions cost (`usage`, docs/usage.md): tokens and USD over the last days, of every
 * session the caller reads or of one team's, as totals, tokens per day and cost per model. A
 * model the price table does not know is named, with its tokens, and leaves the total cost unknown
 * rather than wrong.
 */

const UsagePanelDocument = graphql(`
  query UsagePanel($teamId: ID, $from: String) {
    byDay: usage(teamId: $teamId, from: $from, groupBy: DAY) {
      totalTokens
      costUsd
      groups {
        key
        totalTokens
        costUsd
      }
    }
    byModel: usage(teamId: $teamId, from: $from, groupBy: MODEL) {
      groups {
        key
        sessions
        totalTokens
        costUsd
      }
    }
  }
`);

const tokens = (n: number) => n.toLocaleString('en-US');
/** USD: cents, or four decimals below a cent (a few cheap turns must not read as nothing). */
export const usd = (n: number) =>
  n === 0 ? '$0.00' : n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

/** The day with the most tokens, as the chart's summary. */
function busiest(s: Series): string {
  let best = -1;
  s.values.forEach((v, i) => {
    if (v > 0 && (best < 0 || v > s.values[best])) best = i;
  });
  return best < 0 ? 'no tokens' : `busiest day ${s.labels[best]} with ${tokens(s.values[best])} tokens`;
}

/** Every UTC day from `days - 1` days ago to today, as YYYY-MM-DD. */
function lastDays(days: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

export function UsagePanel({ teamId, days, level = 2, label }: { teamId?: string; days: number; level?: 2 | 3; label?: string }) {
  const id = useId();
  const [data, setData] = useState<UsagePanelQuery | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const from = `${lastDays(days)[0]}T00:00:00.000Z`;
    gql(UsagePanelDocument, { teamId: teamId ?? null, from }).then(setData, (err: unknown) => setError(errorText(err)));
  }, [teamId, days]);

  // Days without usage are zeros, so that the chart shows the whole range.
  const [dayRows, setDayRows] = useState<Array<{ key: string; totalTokens: number }> | undefined>(undefined);
  useEffect(() => {
    if (!data) return;
    const byKey = new Map(data.byDay.groups.map((g) => [g.key, g.totalTokens]));
    setDayRows(lastDays(days).map((key) => ({ key, totalTokens: byKey.get(key) ?? 0 })));
  }, [data, days]);
  const perDay = useSeries(
    dayRows,
    (d) => d.key.slice(5),
    (d) => d.totalTokens,
  );
  const pricedRows = data?.byModel.groups.filter((g) => g.costUsd != null);
  const costByModel = useSeries(
    pricedRows,
    (g) => g.key,
    (g) => g.costUsd!,
  );
  const unpriced = data?.byModel.groups.filter((g) => g.costUsd == null) ?? [];
  const Heading = `h${level}` as const;
  const chartLevel = level === 2 ? 3 : 4;
  const title = label ?? `What sessions cost, last ${days} days`;

  return (
    <section className="usage" aria-labelledby={`${id}-title`}>
      <Heading id={`${id}-title`}>{title}</Heading>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!data ? (
        !error && <p role="status">Loading usage…</p>
      ) : data.byModel.groups.length === 0 ? (
        <p className="muted">No token usage recorded in this period (it is read from the sessions&apos; raw agent logs).</p>
      ) : (
        <>
          <dl className="totals" aria-label={`${title}: totals`}>
            <div className="card">
              <dt>Tokens</dt>
              <dd>{tokens(data.byDay.totalTokens)}</dd>
            </div>
            <div className="card">
              <dt>Cost</dt>
              <dd>{data.byDay.costUsd == null ? 'Unknown' : usd(data.byDay.costUsd)}</dd>
            </div>
          </dl>
          {unpriced.length > 0 && (
            <p className="muted">No price for {unpriced.map((g) => `${g.key} (${tokens(g.totalTokens)} tokens)`).join(', ')}: the total cost is unknown.</p>
          )}
          <BarChart title="Tokens per day" summary={busiest(perDay)} data={perDay} column={['Day', 'Tokens']} format={tokens} level={chartLevel} />
          <BarChart
            title="Cost by model"
            summary={top(costByModel, usd)}
            data={costByModel}
            column={['Model', 'Cost (USD)']}
            format={usd}
            horizontal
            pattern
            whole={false}
            level={chartLevel}
          />
        </>
      )}
    </section>
  );
}
