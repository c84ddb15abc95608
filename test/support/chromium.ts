import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';

/**
 * Real headless Chromium (Debian's, .ci/run-chromium.sh installs it) for the console's browser
 * tests: every request the page makes is recorded (to prove nothing leaves the origin), page
 * errors and CSP violations are collected, and axe-core is injected through the DevTools
 * protocol (not a <script>: the console's CSP forbids inline scripts, and we keep it on).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The console's live-update stream (GraphQL subscriptions): open as long as a list is shown. */
const isLiveStream = (r: Request) => new URL(r.url()).pathname === '/api/v1/graphql/stream';

/**
 * Watches a page's requests from now on. `quiet()` resolves once none has been in flight for
 * `quietMs`, the live-update stream aside: it stays open while a list is shown, so Playwright's
 * `networkidle` never comes on such a page.
 */
export function watchNetwork(page: Page): { quiet(quietMs?: number, timeoutMs?: number): Promise<void>; stop(): void } {
  const inFlight = new Set<Request>();
  const started = (r: Request) => void (isLiveStream(r) || inFlight.add(r));
  const ended = (r: Request) => void inFlight.delete(r);
  page.on('request', started);
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  return {
    async quiet(quietMs = 500, timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      let since = Date.now();
      for (;;) {
        await new Promise((r) => setTimeout(r, 50));
        if (inFlight.size > 0) since = Date.now();
        else if (Date.now() - since >= quietMs) return;
        if (Date.now() > until) throw new Error(`requests still in flight after ${timeoutMs} ms: ${[...inFlight].map((r) => r.url()).join(', ')}`);
      }
    },
    stop() {
      page.off('request', started);
      page.off('requestfinished', ended);
      page.off('requestfailed', ended);
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: run .ci/run-chromium.sh`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });
}

export interface Recorded {
  context: BrowserContext;
  page: Page;
  /** Every URL requested by any page of the context. */
  requests: string[];
  /** Uncaught page errors and console errors (CSP violations are reported there). */
  errors: string[];
  /**
   * Each request answered 400 or above, or not answered (`<status or error> <method> <url>`): shown
   * when a step fails, since Chromium's own "Failed to load resource" lines are not kept in `errors`.
   */
  failures: string[];
}

/** A fresh context (own cookies) with clipboard access, recording requests and errors. */
export async function newRecordedPage(browser: Browser, origin: string): Promise<Recorded> {
  const context = await browser.newContext({ baseURL: origin, locale: 'en-US' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  context.setDefaultTimeout(30_000);
  context.setDefaultNavigationTimeout(60_000);
  const requests: string[] = [];
  const errors: string[] = [];
  const failures: string[] = [];
  context.on('request', (req) => requests.push(req.url()));
  context.on('response', (res) => {
    if (res.status() >= 400) failures.push(`${res.status()} ${res.request().method()} ${res.url()}`);
  });
  context.on('requestfailed', (req) => failures.push(`${req.failure()?.errorText ?? 'failed'} ${req.method()} ${req.url()}`));
  const page = await context.newPage();
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // A 401 from /auth/session while signed out is logged by Chromium as a failed resource; only
    // script errors and policy violations count.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(`console: ${msg.text()}`);
  });
  return { context, page, requests, errors, failures };
}

let axeSource: string | null = null;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core on the current page; returns the serious and critical violations. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  const has = await page.evaluate(() => typeof (globalThis as any).axe !== 'undefined');
  if (!has) await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const r = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return (r.violations as any[]).map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: (v.nodes as any[]).map((n) => String(n.html).slice(0, 200)),
    }));
  });
  return result.filter((v: AxeViolation) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Runs a test step; when it fails, the error also tells what the page showed, its last requests
 * and its errors (a timeout alone says little).
 */
export function step(rec: () => Recorded, fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await fn();
    } catch (err) {
      const r = rec();
      // Set-up failed before a page was opened: its own error says more.
      if (!r?.page) throw err;
      const text = await r.page
        .locator('body')
        .innerText({ timeout: 2000 })
        .catch(() => '(unreadable)');
      if (err instanceof Error) {
        err.message += `\n--- page ${r.page.url()}:\n${text.slice(0, 2000)}\n--- last requests:\n${r.requests.slice(-10).join('\n')}\n--- answered 400 or above, or not at all:\n${r.failures.slice(-10).join('\n')}\n--- errors:\n${r.errors.join('\n')}`;
        // Jest prints the stack, which holds the message as it was when the error was made.
        const frames = (err.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
        err.stack = [`${err.name}: ${err.message}`, ...frames].join('\n');
      }
      throw err;
    }
  };
}

/**
 * Opens the session reader's folded panel (session details, tags, downloads, share links) as a
 * person does, by its summary; nothing when it is open already.
 */
export async function openReaderPanel(page: Page): Promise<void> {
  const summary = page.getByText('Details, tags and sharing', { exact: true });
  await summary.waitFor();
  const open = await summary.evaluate((s) => (s.parentElement as unknown as { open: boolean }).open);
  if (!open) await summary.click();
}
