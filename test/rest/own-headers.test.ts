/**
 * The service's own headers (src/http/own-headers.ts) are stored where node's setHeader stores
 * them: the bytes on the wire, getHeader, removeHeader and "headers already sent" all behave as
 * with setHeader.
 */
import http from 'node:http';
import net from 'node:net';
import { ownHeader, ownHeadersOnce, ownHeadersStoredDirectly, setOwnHeader } from '../../src/http/own-headers';

/** The raw head of one answer of a server whose handler is `handle`. */
async function rawHead(handle: (res: http.ServerResponse) => void): Promise<string> {
  const server = http.createServer((_req, res) => handle(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as net.AddressInfo;
    return await new Promise<string>((resolve, reject) => {
      let got = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      socket.on('data', (d) => (got += d.toString('latin1')));
      socket.on('end', () => resolve(got.split('\r\n\r\n')[0].replace(/^Date: .*\r\n/m, '')));
      socket.on('error', reject);
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test('this node stores them directly (else the fast path is silently off)', () => {
  expect(ownHeadersStoredDirectly).toBe(true);
});

test('the same head on the wire as setHeader, with removeHeader and later setHeader calls', async () => {
  const headers: Array<[string, string]> = [
    ['X-Request-Id', 'abc'],
    ['ETag', '"e1"'],
    ['Content-Type', 'text/markdown; charset=utf-8'],
    ['Content-Length', '5'],
  ];
  const viaSet = await rawHead((res) => {
    for (const [n, v] of headers) res.setHeader(n, v);
    res.setHeader('X-Extra', '1');
    res.removeHeader('X-Extra');
    res.setHeader('etag', '"e2"');
    res.end('hello');
  });
  const own = await rawHead((res) => {
    ownHeadersOnce([...headers.slice(0, 2), ['X-Extra', '1'], ['X-Extra', null]])(res);
    setOwnHeader(res, ownHeader('Content-Type'), 'text/markdown; charset=utf-8');
    setOwnHeader(res, ownHeader('Content-Length'), '5');
    expect(res.getHeader('etag')).toBe('"e1"');
    res.setHeader('etag', '"e2"');
    res.end('hello');
  });
  expect(own).toBe(viaSet);
  expect(own).toMatch(/^etag: "e2"$/im);
  expect(own).not.toContain('X-Extra');
});

test('after the head is sent it throws as setHeader does', async () => {
  let thrown: unknown;
  await rawHead((res) => {
    res.end('x');
    try {
      setOwnHeader(res, ownHeader('X-Late'), '1');
    } catch (err) {
      thrown = err;
    }
  });
  expect((thrown as { code?: string }).code).toBe('ERR_HTTP_HEADERS_SENT');
});
