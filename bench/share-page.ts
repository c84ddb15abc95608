/**
 * The public page of a share link (/s/<token>) on a 50 MB session, against the real server
 * process (`tsx src/main.ts`) on a fresh database, with the search worker off:
 *   - making the link (the snapshot copies every exchange of the session);
 *   - the page's HTML over node:http: time and size (it embeds the first page of the share);
 *   - in Debian's Chromium, a fresh context each time (no cookie, as a visitor): from navigation
 *     to the first exchange on screen, rendered; what the page received by then and until idle
 *     (later pages are prefetched as the reader nears the end).
 * The session is bench/reader.ts's (about 9,000 exchanges of ~5 KB and one of 2 MB).
 * Run: npx tsx bench/share-page.ts
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { agent, request, transcript } from './reader';
import { BenchServer, freshDatabaseWithUser, median } from './support';

const RUNS = 6;

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

async function main() {
  const { db, user } = await freshDatabaseWithUser('sa_bench_share');
  const token = user.token;
  let server: BenchServer | null = null;
  try {
    server = await BenchServer.start({ env: { DATABASE_URL: db.url, SHARE_READS_PER_MINUTE: '100000' } });
    const base = server.url;
    const id = crypto.randomUUID();
    const md = transcript('shared');
    const up = await request(
      `${base}/api/v1/projects/bench-share/sessions/${id}`,
      'PUT',
      token,
      Buffer.from(JSON.stringify({ name: 'big-shared', markdown: md, rawData: '{}' })),
    );
    if (up.status !== 201) throw new Error(`upload: ${up.status} ${up.text.slice(0, 200)}`);
    const made = await request(`${base}/api/v1/projects/bench-share/sessions/${id}/shares`, 'POST', token, Buffer.from('{}'));
    if (made.status !== 201) throw new Error(`share: ${made.status} ${made.text.slice(0, 200)}`);
    const share = (
      JSON.parse(made.text) as {
        data: { share: { url: string; exchangeCount: number } };
      }
    ).data.share;
    const linkPath = share.url.slice(share.url.indexOf('/s/'));
    console.log(
      `session: ${(Buffer.byteLength(md) / 1e6).toFixed(1)} MB of markdown, ${share.exchangeCount} exchanges; making the link (snapshot copy): ${made.ms.toFixed(0)} ms\n`,
    );

    // The HTML alone (no cookie, no key), as any client gets it.
    const html: number[] = [];
    let htmlBytes = 0;
    for (let i = 0; i < 10; i++) {
      const r = await request(`${base}${linkPath}`, 'GET', '');
      if (r.status !== 200) throw new Error(`page: ${r.status}`);
      html.push(r.ms);
      htmlBytes = r.bytes;
    }
    console.log(
      `GET /s/<token> (HTML with the first page embedded): median ${median(html).toFixed(1)} ms, max ${Math.max(...html).toFixed(1)} ms, ${kib(htmlBytes)}`,
    );

    const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (!fs.existsSync(chromiumPath)) {
      console.log(`(no Chromium at ${chromiumPath}: browser figures skipped)`);
      return;
    }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const times: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        // A fresh context each time: a first visit (nothing cached, no cookie).
        const context = await browser.newContext({ baseURL: base });
        const page = await context.newPage();
        let apiBytes = 0;
        let allBytes = 0;
        page.on('response', (r) => {
          void r
            .body()
            .catch(() => Buffer.alloc(0))
            .then((b) => {
              allBytes += b.length;
              if (r.url().includes('/api/')) apiBytes += b.length;
            });
        });
        const t0 = performance.now();
        await page.goto(linkPath, { waitUntil: 'commit' });
        // On screen and rendered: the first exchange's heading and its markdown through the sanitiser.
        await page.locator('#exchange-1 .md:not(.pending)').waitFor({ timeout: 120_000 });
        const ms = performance.now() - t0;
        const apiAtFirst = apiBytes;
        await page.waitForLoadState('networkidle');
        times.push(ms);
        console.log(
          `Chromium, ${run === 0 ? 'first visit after start' : `visit ${run + 1}`}: first exchange rendered ${ms.toFixed(0)} ms, ${kib(apiAtFirst)} from the API by then; until idle ${kib(apiBytes)} from the API, ${kib(allBytes)} with the page and its assets`,
        );
        await context.close();
      }
      console.log(`\nChromium, first exchange rendered: median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms over ${RUNS} visits`);
    } finally {
      await browser.close();
    }
  } finally {
    agent.destroy();
    await server?.stop();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
