import { useEffect, useId, useState } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { SessionFacetsQuery, SessionFilters, SessionOrder } from '../gql/graphql';

/*
 * The session filters (docs/graphql.md) as a form whose state lives in the URL (shareable, back/forward
 * work): `model`, `tag`, `branch`, `client`, `agent`, `device` (each repeatable: a session matches
 * when it has any of the values; the form shows each as a group of checkboxes named by value), `from` / `to` (YYYY-MM-DD, UTC days, on createdAt, inclusive)
 * and, on a project's list, `order`. The values offered come from `sessionFacets`.
 */

export const FACETS = [
  { param: 'model', field: 'llmModels', label: 'Model' },
  { param: 'tag', field: 'tags', label: 'Tag' },
  { param: 'branch', field: 'gitBranches', label: 'Branch' },
  { param: 'client', field: 'clientNames', label: 'Client' },
  { param: 'agent', field: 'agentNames', label: 'Agent' },
  { param: 'device', field: 'deviceIds', label: 'Device' },
] as const;

export const ORDERS: Array<{ value: SessionOrder; label: string }> = [
  { value: 'UPDATED_AT_DESC', label: 'Last changed, newest first' },
  { value: 'UPDATED_AT_ASC', label: 'Last changed, oldest first' },
  { value: 'CREATED_AT_DESC', label: 'Uploaded, newest first' },
  { value: 'CREATED_AT_ASC', label: 'Uploaded, oldest first' },
  { value: 'STARTED_AT_DESC', label: 'Started, newest first' },
  { value: 'STARTED_AT_ASC', label: 'Started, oldest first' },
  { value: 'NAME_ASC', label: 'Name, A to Z' },
];

export const DEFAULT_ORDER: SessionOrder = 'UPDATED_AT_DESC';

export function orderFromParams(params: URLSearchParams): SessionOrder {
  const o = params.get('order');
  return ORDERS.some((x) => x.value === o) ? (o as SessionOrder) : DEFAULT_ORDER;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** URL parameters → SessionFilters (plus the fixed project, if any). Malformed dates are ignored. */
export function filtersFromParams(params: URLSearchParams, projectId?: string): SessionFilters {
  const f: SessionFilters = {};
  if (projectId) f.projectId = projectId;
  for (const { param, field } of FACETS) {
    const values = params.getAll(param).filter((v) => v !== '');
    if (values.length) f[field] = values;
  }
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  if (DAY.test(from) || DAY.test(to)) {
    f.dateRange = {};
    if (DAY.test(from)) f.dateRange.start = `${from}T00:00:00.000Z`;
    if (DAY.test(to)) f.dateRange.end = `${to}T23:59:59.999Z`;
  }
  return f;
}

/** True when any filter (not the order) is set. */
export const hasFilters = (params: URLSearchParams) => FACETS.some((x) => params.getAll(x.param).some(Boolean)) || !!params.get('from') || !!params.get('to');

const SessionFacetsDocument = graphql(`
  query SessionFacets($projectId: ID) {
    sessionFacets(projectId: $projectId, limit: 100) {
      llmModels {
        value
        count
      }
      tags {
        value
        count
      }
      gitBranches {
        value
        count
      }
      clientNames {
        value
        count
      }
      agentNames {
        value
        count
      }
      deviceIds {
        value
        count
      }
    }
  }
`);

type Facets = SessionFacetsQuery['sessionFacets'];

/**
 * The filter form. `params` / `onChange` are the page's URL search parameters; every change
 * replaces the URL (the page reloads its list from it). Values come from the server and are shown
 * as text only.
 */
export function FilterForm({
  params: url,
  onChange: change,
  projectId,
  withOrder,
}: {
  params: URLSearchParams;
  onChange: (next: URLSearchParams) => void;
  projectId?: string;
  withOrder?: boolean;
}) {
  const [facets, setFacets] = useState<Facets | null>(null);
  const [shown, setShown] = useState(false);
  const id = useId();
  // What the form shows: the URL's parameters, and at once what was just chosen. The router
  // applies a URL change in a transition, later; a control bound to the URL alone would spring
  // back until then (under load, visibly).
  const [params, setParams] = useState(url);
  const [seen, setSeen] = useState(url);
  if (url !== seen) {
    setSeen(url);
    setParams(url);
  }
  const onChange = (next: URLSearchParams) => {
    setParams(next);
    change(next);
  };
  useEffect(() => {
    let live = true;
    gql(SessionFacetsDocument, { projectId: projectId ?? null }).then(
      (r) => live && setFacets(r.sessionFacets),
      () => live && setFacets(null),
    );
    return () => {
      live = false;
    };
  }, [projectId]);

  const set = (param: string, value: string) => {
    const next = new URLSearchParams(params);
    next.delete(param);
    if (value) next.set(param, value);
    onChange(next);
  };
  /** Adds or removes one value of a list filter; the others stay (a session matches any of them). */
  const toggle = (param: string, value: string, on: boolean) => {
    const next = new URLSearchParams(params);
    const kept = next.getAll(param).filter((v) => v !== '' && v !== value);
    next.delete(param);
    for (const v of on ? [...kept, value] : kept) next.append(param, v);
    onChange(next);
  };
  const clear = () => {
    const next = new URLSearchParams(params);
    for (const { param } of FACETS) next.delete(param);
    next.delete('from');
    next.delete('to');
    onChange(next);
  };

  const active =
    FACETS.reduce((n, { param }) => n + params.getAll(param).filter(Boolean).length, 0) + (params.get('from') ? 1 : 0) + (params.get('to') ? 1 : 0);
  return (
    <div className={shown ? 'filter-box open' : 'filter-box'}>
      {/* Narrow screens: the filters fold behind this button (styles.css shows it there only). */}
      <button type="button" className="filters-toggle" aria-expanded={shown} aria-controls={`${id}-filters`} onClick={() => setShown(!shown)}>
        {active ? `Filters (${active})` : 'Filters'}
      </button>
      <fieldset className="filters" id={`${id}-filters`}>
        <legend>Filters</legend>
        {FACETS.map(({ param, field, label }) => {
          const chosen = [...new Set(params.getAll(param).filter((v) => v !== ''))];
          const offered = facets?.[field] ?? [];
          // Values from the URL that the facets do not list (yet) stay shown, checked, first.
          const values = [...chosen.filter((c) => !offered.some((v) => v.value === c)).map((value) => ({ value, count: 0 })), ...offered];
          return (
            <fieldset className="facet" key={param}>
              <legend>{label}</legend>
              {values.length === 0 ? (
                <p className="muted">{facets ? 'None yet' : 'Loading…'}</p>
              ) : (
                <ul className="choices">
                  {values.map((v, i) => (
                    <li key={v.value}>
                      <label>
                        <input
                          type="checkbox"
                          checked={chosen.includes(v.value)}
                          onChange={(e) => toggle(param, v.value, e.target.checked)}
                          aria-describedby={v.count ? `${id}-${param}-${i}` : undefined}
                        />
                        {v.value}
                      </label>
                      {v.count > 0 && (
                        <span id={`${id}-${param}-${i}`} className="muted count">
                          {v.count === 1 ? '1 session' : `${v.count} sessions`}
                        </span>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </fieldset>
          );
        })}
        <div className="field">
          <label htmlFor={`${id}-from`}>Created from</label>
          <input id={`${id}-from`} type="date" value={params.get('from') ?? ''} onChange={(e) => set('from', e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-to`}>Created until</label>
          <input id={`${id}-to`} type="date" value={params.get('to') ?? ''} onChange={(e) => set('to', e.target.value)} />
        </div>
        {withOrder && (
          <div className="field">
            <label htmlFor={`${id}-order`}>Order</label>
            <select id={`${id}-order`} value={orderFromParams(params)} onChange={(e) => set('order', e.target.value === DEFAULT_ORDER ? '' : e.target.value)}>
              {ORDERS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </div>
        )}
        {hasFilters(params) && (
          <div className="field clear">
            <button type="button" onClick={clear}>
              Clear filters
            </button>
          </div>
        )}
      </fieldset>
    </div>
  );
}

/** Bytes in B / KiB / MiB. */
export const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1048576).toFixed(1)} MiB`;

/** The reader's address for a session (and an exchange, 1-based). */
export const readerHref = (projectId: string, sessionId: string, exchange?: number) =>
  `/projects/${encodeURIComponent(projectId)}/sessions/${encodeURIComponent(sessionId)}${exchange ? `#exchange-${exchange}` : ''}`;
