/**
 * A webhook receiver for tests: a node:http server on 127.0.0.1 that records every request and
 * answers as `answer` says (a status, after an optional delay, or never). `close()` ends it and
 * every connection it holds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** How the next requests are answered: a status (default 200), 'hang' (never), or a function. */
  answer: (r: Received, res: http.ServerResponse) => void;
  /** Waits until `n` requests (matching `filter`) have arrived; fails after `ms`. */
  waitFor(n: number, filter?: (r: Received) => boolean, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export const status =
  (code: number, headers: Record<string, string> = {}) =>
  (_r: Received, res: http.ServerResponse) => {
    res.writeHead(code, headers);
    res.end('ok');
  };

export async function startReceiver(): Promise<Receiver> {
  const sockets = new Set<import('node:net').Socket>();
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      rec.answer(r, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const rec: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answer: status(200),
    async waitFor(n, filter = () => true, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const got = received.filter(filter);
        if (got.length >= n) return got;
        if (Date.now() > deadline) throw new Error(`waited for ${n} webhook requests, got ${got.length}: ${got.map((g) => g.body).join('\n')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return rec;
}
