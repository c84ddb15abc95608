import { renderMarkdown } from '../markdown';
import '../styles.css';
import '../reader.css';
import './share.css';

/*
 * The public page of a share link (/s/<token>): the shared session read-only, without the
 * console around it. The server embeds the first page of the share as inert JSON
 * (<script type="application/json" id="share-data">), so the first exchange shows without a
 * second request; later exchanges come from GET /api/v1/share/<token>?from=N&limit=M as the
 * reader scrolls (or presses "Show more exchanges"). Markdown goes through the console's
 * sanitiser (../markdown.ts), each exchange only when it comes near the viewport. Plain DOM, no
 * framework: the page stays a small bundle. It sets no cookie and, for public links, sends none.
 */

interface SharedExchange {
  number: number;
  title?: string;
  markdown?: string;
  hidden?: true;
}

interface SharePage {
  title: string;
  createdAt: string;
  sharedAt: string;
  agentName: string | null;
  llmModels: string[];
  exchangeCount: number;
  hiddenCount: number;
  from: number;
  nextFrom: number | null;
  exchanges: SharedExchange[];
}

interface Boot {
  audience: 'public' | 'signed-in';
  page: SharePage;
}

/**
 * Exchanges asked for per later page (the service also bounds a page by its markdown bytes): a
 * page of short exchanges is still one request, which keeps a long read under the per-address
 * read limit.
 */
const PAGE_LIMIT = 100;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; id?: string; text?: string } = {},
  ...children: Node[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.className) e.className = props.className;
  if (props.id) e.id = props.id;
  if (props.text !== undefined) e.textContent = props.text;
  for (const c of children) e.append(c);
  return e;
}

const dateFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'short',
});

function time(iso: string): HTMLTimeElement {
  const t = el('time', {
    text: Number.isNaN(Date.parse(iso)) ? iso : dateFormat.format(new Date(iso)),
  });
  t.dateTime = iso;
  return t;
}

function metaItem(label: string, value: Node | string): HTMLDivElement {
  const dd = el('dd');
  dd.append(value);
  return el('div', {}, el('dt', { text: label }), dd);
}

function header(page: SharePage): HTMLElement {
  const meta = el('dl', { className: 'meta' });
  if (page.agentName) meta.append(metaItem('Agent', page.agentName));
  if (page.llmModels.length) meta.append(metaItem('Models', page.llmModels.join(', ')));
  meta.append(metaItem('Session started', time(page.createdAt)));
  meta.append(metaItem('Shared', time(page.sharedAt)));
  const count = `${page.exchangeCount}${page.hiddenCount ? ` (${page.hiddenCount} hidden by the person who shared it)` : ''}`;
  meta.append(metaItem('Exchanges', count));
  return el(
    'header',
    { className: 'details' },
    el('p', {
      className: 'muted share-note',
      text: 'A shared session, read-only.',
    }),
    el('h1', { id: 'share-title', text: page.title }),
    meta,
  );
}

/** Renders an exchange's markdown once it comes near the viewport (the first one at once). */
const pending = new Map<Element, string>();
const nearViewport = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const md = pending.get(entry.target);
      if (md === undefined) continue;
      pending.delete(entry.target);
      nearViewport.unobserve(entry.target);
      renderInto(entry.target as HTMLElement, md);
    }
  },
  { rootMargin: '800px' },
);

function renderInto(box: HTMLElement, markdown: string): void {
  box.classList.remove('pending');
  box.style.minHeight = '';
  box.innerHTML = renderMarkdown(markdown);
}

function exchangeView(e: SharedExchange, renderNow: boolean): HTMLElement {
  const headingId = `exchange-${e.number}-title`;
  const section = el('section', {
    id: `exchange-${e.number}`,
    className: e.hidden ? 'exchange hidden-exchange' : 'exchange',
  });
  section.setAttribute('aria-labelledby', headingId);
  const h2 = el(
    'h2',
    { id: headingId },
    el('span', { className: 'num', text: `${e.number}.` }),
    document.createTextNode(` ${e.hidden ? 'Hidden exchange' : (e.title ?? '')}`),
  );
  section.append(h2);
  if (e.hidden) {
    section.append(
      el('p', {
        className: 'muted',
        text: 'The person who shared this session left this exchange out.',
      }),
    );
    return section;
  }
  const markdown = e.markdown ?? '';
  const box = el('div', { className: 'md' });
  section.append(box);
  if (renderNow) {
    renderInto(box, markdown);
  } else {
    box.classList.add('pending');
    box.style.minHeight = `${Math.min(6000, Math.max(60, Math.round(markdown.length / 5)))}px`;
    box.append(el('span', { className: 'visually-hidden', text: 'Not rendered yet' }));
    pending.set(box, markdown);
    nearViewport.observe(box);
  }
  return section;
}

function start(): void {
  const data = document.getElementById('share-data');
  const root = document.getElementById('share');
  // The page of a dead link carries no data: its text is already on the page.
  if (!data || !root) return;
  const boot = JSON.parse(data.textContent ?? '') as Boot;
  const token = location.pathname.slice('/s/'.length);
  const first = boot.page;

  const transcript = el('div', { className: 'transcript' });
  transcript.setAttribute('role', 'region');
  transcript.setAttribute('aria-label', 'Transcript');
  const status = el('p', { className: 'status' });
  status.setAttribute('role', 'status');
  const more = el('button', { text: 'Show more exchanges' });
  more.type = 'button';
  const sentinel = el('div', { className: 'sentinel' });
  root.replaceChildren(header(first), transcript, sentinel, status);

  let next = first.nextFrom;
  let loading = false;
  const append = (exchanges: SharedExchange[], renderFirst: boolean) => {
    exchanges.forEach((e, i) => transcript.append(exchangeView(e, renderFirst && i === 0)));
  };
  append(first.exchanges, true);
  if (first.exchangeCount === 0) transcript.append(el('p', { className: 'muted', text: 'This session has no exchanges.' }));

  const loadMore = async () => {
    if (loading || next === null) return;
    loading = true;
    more.disabled = true;
    transcript.setAttribute('aria-busy', 'true');
    status.textContent = 'Loading…';
    let loaded = false;
    try {
      const r = await fetch(`/api/v1/share/${encodeURIComponent(token)}?from=${next}&limit=${PAGE_LIMIT}`, {
        // A public link's reads carry no cookie; a signed-in link's carry the session's.
        credentials: boot.audience === 'public' ? 'omit' : 'same-origin',
        headers: { accept: 'application/json' },
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
      if (r.status === 401) {
        location.assign(`/sign-in?next=${encodeURIComponent(location.pathname)}`);
        return;
      }
      if (r.status === 404) {
        next = null;
        status.textContent = 'This link is no longer available: the rest of the session cannot be shown.';
        return;
      }
      const body = (await r.json().catch(() => null)) as {
        success?: boolean;
        data?: SharePage;
        error?: string;
      } | null;
      if (!r.ok || !body?.data) {
        status.textContent = `The next exchanges could not be loaded: ${body?.error ?? `HTTP ${r.status}`}. Try again.`;
        return;
      }
      append(body.data.exchanges, false);
      next = body.data.nextFrom;
      status.textContent = '';
      loaded = true;
    } catch {
      status.textContent = 'The next exchanges could not be loaded (network error). Try again.';
    } finally {
      loading = false;
      more.disabled = false;
      transcript.removeAttribute('aria-busy');
      if (next === null) more.remove();
      else if (!more.isConnected) root.append(more);
      // Still near the end (short exchanges): the observer reports changes only, so look again.
      if (loaded && next !== null && sentinel.getBoundingClientRect().top < innerHeight + 1200) setTimeout(() => void loadMore(), 0);
    }
  };
  more.addEventListener('click', () => void loadMore());
  if (next !== null) {
    root.append(more);
    new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && void loadMore(), { rootMargin: '1200px' }).observe(sentinel);
  }
}

start();
