/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, pinned, run offline from
 * node_modules) against /mcp, through a local proxy that adds the Bearer key (the suite sends no
 * headers of its own). Only the scenarios about the protocol itself apply: the rest call the
 * suite's own fixture tools, prompts and resources (test_simple_text, …), which this archive does
 * not have by design; they are listed in docs/mcp.md.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { ROOT } from '../support/paths';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

let app: TestApp;
let u: TestUser;
let proxy: http.Server;
let proxyUrl: string;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  u = await app.createUser('conf');
  const target = new URL(app.url);
  proxy = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${u.token}` };
    const out = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await app?.close();
});

function conformance(scenario: string): Promise<{ code: number; out: string }> {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'conformance');
  return new Promise((resolve) => {
    execFile(
      bin,
      ['server', '--url', `${proxyUrl}/mcp`, '--scenario', scenario],
      { timeout: 120_000, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as any).code) || 1 : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

test.each(SCENARIOS)(
  'conformance scenario %s passes',
  async (scenario) => {
    const r = await conformance(scenario);
    // On failure the suite's own report says which check failed.
    expect([scenario, r.code, r.code === 0 ? '' : r.out.slice(-4000)]).toEqual([scenario, 0, '']);
  },
  150_000,
);
