import fs from 'node:fs';
import path from 'node:path';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../errors';
import { findConsoleDir } from '../http/console';
import { SITE_ROUTES, siteRouteOf } from '../http/site-routes';
import { sendNotBuilt } from '../http/static-bundle';
import type { Logger } from '../logger';
import { publicCtx, type Deps } from '../services/context';
import * as shares from '../services/shares';
import { shareHeaders, signedInProbe } from './shares';

/**
 * The public page of a share link, GET /s/<token> (docs/shares.md): share.html of the console's
 * build (dist/web) with the share's first page embedded as inert JSON, so the first exchange shows
 * without a second request; the page's script renders it through the console's markdown sanitiser
 * and asks GET /api/v1/share/<token> for later pages. Every answer carries the share headers
 * (noindex, no-referrer, no-store, the console's strict CSP). Every dead link (unknown, malformed,
 * forged, expired, revoked) gets the same 404 page; a `signed-in` link sends a visitor without a
 * session to the console's sign-in, which brings them back here.
 */

/** Markdown embedded in the page itself: enough for the first exchanges, small enough to parse at once. */
const SHARE_PAGE_EMBED_BYTES = 1024 * 1024;

const TITLE_RE = /<title>[^<]*<\/title>/;
const MAIN_RE = /<main id="share" class="share">[\s\S]*?<\/main>/;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JSON that cannot end its <script> element or open a comment in it: `<`, `>`, `&` and line separators escaped. */
const inertJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/**
 * Open Graph tags, so that a pasted link previews: the title and how many exchanges, never any of
 * the content (the exchanges, their titles, models or dates stay on the page itself).
 */
function previewTags(page: Pick<shares.SharedSession, 'title' | 'exchangeCount'>): string {
  const n = page.exchangeCount;
  return [
    ['og:type', 'article'],
    ['og:site_name', 'Session Archive'],
    ['og:title', page.title],
    ['og:description', n === 1 ? '1 exchange' : `${n} exchanges`],
  ]
    .map(([property, content]) => `<meta property="${property}" content="${escapeHtml(content)}" />`)
    .join('');
}

interface Template {
  head: string;
  tail: string;
  notFound: string;
  tooMany: string;
}

function templateOf(html: string): Template {
  if (!TITLE_RE.test(html) || !MAIN_RE.test(html)) throw new Error('share.html lacks its <title> or <main id="share">');
  const message = (title: string, text: string) =>
    html
      .replace(TITLE_RE, `<title>${escapeHtml(title)} · Session Archive</title>`)
      .replace(MAIN_RE, `<main id="share" class="share"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></main>`);
  const marker = '\u0000DATA\u0000';
  const [head, tail] = html.replace(MAIN_RE, `<main id="share" class="share"><p role="status">Loading the shared session…</p></main>${marker}`).split(marker);
  return {
    head,
    tail,
    notFound: message('Link not found', 'This share link does not exist, has expired, or was revoked.'),
    tooMany: message('Too many requests', 'Too many pages of shared sessions were read from this address. Wait a minute, then reload.'),
  };
}

export function sharePageRouter(deps: Deps, auth: RequestHandler, limit: RequestHandler, logger: Logger, dir: string | null = findConsoleDir()): Router {
  const r = Router();
  let template: Template | null = null;
  const load = (): Template | null => {
    if (template) return template;
    const d = dir ?? findConsoleDir();
    if (!d || !fs.existsSync(path.join(d, 'share.html'))) return null;
    template = templateOf(fs.readFileSync(path.join(d, 'share.html'), 'utf8'));
    return template;
  };
  if (!dir)
    logger.warn({
      msg: 'share page not built (dist/web/share.html missing): run `npm run build`',
    });

  const send = (res: Response, status: number, html: string) => {
    res.status(status).type('html').send(html);
  };

  // Every path under /s/: a token holds no slash, so anything longer is a dead link too.
  r.get(SITE_ROUTES.sharePage.path, ...shareHeaders, limit, async (req: Request, res: Response) => {
    const t = load();
    if (!t) return sendNotBuilt(res, 'web console');
    const token = String((req.params as Record<string, string>)[0] ?? '');
    // Whether the link asked who the visitor is (signed-in links only): a public link's page
    // never reads the cookie, and its script sends none.
    let asked = false;
    const probe = signedInProbe(auth, req, res);
    const page = await shares.readShare(publicCtx(deps), token, {
      from: 1,
      limit: shares.SHARE_PAGE_MAX_LIMIT,
      maxBytes: SHARE_PAGE_EMBED_BYTES,
      countView: req.method === 'GET',
      signedIn: () => {
        asked = true;
        return probe();
      },
    });
    // A function, not a string: `$&` or `$'` in a title must not be read as a replacement pattern.
    const html = t.head.replace(TITLE_RE, () => `<title>${escapeHtml(page.title)} · Shared session</title>${previewTags(page)}`);
    const boot = inertJson({
      audience: asked ? 'signed-in' : 'public',
      page,
    });
    send(res, 200, `${html}<script type="application/json" id="share-data">${boot}</script>${t.tail}`);
  });

  r.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    const t = load();
    if (!(err instanceof AppError) || !t || siteRouteOf(req)?.id !== 'sharePage' || res.headersSent) {
      next(err);
      return;
    }
    if (err.code === 'NOT_FOUND') return send(res, 404, t.notFound);
    if (err.code === 'RATE_LIMITED') return send(res, 429, t.tooMany);
    if (err.code === 'UNAUTHENTICATED') {
      // Back to this very link after signing in (the console's sign-in follows `next`).
      const back = req.originalUrl.split('?')[0];
      res.redirect(302, `/sign-in?next=${encodeURIComponent(back)}`);
      return;
    }
    next(err);
  });
  return r;
}
