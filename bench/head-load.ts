/**
 * Closed-loop load for HEAD requests, which autocannon cannot drive (it waits for a body of the
 * announced Content-Length that HEAD never sends). Same shape as autocannon's run: N keep-alive
 * connections, each sending its next request when the previous answer arrives, for D seconds.
 *   npx tsx bench/head-load.ts URL TOKEN CONNECTIONS SECONDS   → prints JSON {rps, p50, p99, non2xx}
 */
import http from 'node:http';

const [url, token, connections, seconds] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(connections) });
const latencies: number[] = [];
let non2xx = 0;
const until = Date.now() + Number(seconds) * 1000;

function one(): Promise<void> {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { method: 'HEAD', agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (res.statusCode! >= 300) non2xx++;
        resolve();
      });
    });
    req.on('error', () => {
      non2xx++;
      resolve();
    });
    req.end();
  });
}

async function loop() {
  while (Date.now() < until) await one();
}

Promise.all(Array.from({ length: Number(connections) }, loop))
  .then(() => {
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
    console.log(JSON.stringify({ rps: latencies.length / Number(seconds), p50: q(0.5), p99: q(0.99), non2xx }));
    agent.destroy();
  })
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
