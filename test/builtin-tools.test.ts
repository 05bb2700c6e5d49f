import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { evaluateExpression, formatNumber } from '../core/tools/expression';
import { builtinTools } from '../lib/tools/builtin';
import type { HttpFetchOptions } from '../lib/tools/builtin/http-fetch';
import { isPublicAddress } from '../lib/tools/host-patterns';
import { ToolRegistry } from '../lib/tools/registry';
import { runWithBudget } from './support/budgeted-worker';
import type { HttpFetchCalls, SettledCall } from './support/http-fetch-calls';

/** The built-in tools, without Temporal: calculator's parser, and http_fetch against a local server. */

const context = () => ({ attempt: 1, signal: new AbortController().signal, heartbeat: () => undefined });

describe('calculator', () => {
  it.each([
    ['1 + 2 * 3', '7'],
    ['2^3^2', '512'],
    ['-2^2', '-4'],
    ['(1 + 2) * 3', '9'],
    ['0.1 + 0.2', '0.3'],
    ['2pi', '6.28318530717959'],
    ['3(4 + 1)', '15'],
    ['sqrt(16) + log(100) + log(8, 2)', '9'],
    ['5!', '120'],
    ['max(1, 7, 3) - min(4, 2)', '5'],
    ['round(2.345, 2)', '2.35'],
    ['1.5e3 * 2', '3000'],
    ['10 % 4', '2'],
    ['2 ** 10', '1024'],
    ['7 × 6 ÷ 2 − 1', '20'],
    ['(1200 * 0.035) / 12', '3.5'],
  ])('%s = %s', (expression, expected) => {
    expect(formatNumber(evaluateExpression(expression))).toBe(expected);
  });

  it.each([
    ['1 / 0', 'Division by zero at position 3'],
    ['2 +', 'Expected a number, a name or "(" but found the end of the expression at position 4'],
    ['((1)', 'Expected ")" but found the end of the expression at position 5'],
    ['sqrt(-1)', 'The result is not a number (e.g. the square root of a negative number)'],
    ['constructor', 'Unknown name "constructor"'],
    ['process.exit(1)', 'Unexpected character "." at position 8'],
    ['sqrt', 'Function sqrt needs its arguments in parentheses at position 5'],
    ['pow(2)', 'pow takes 2 arguments, not 1 at position 1'],
    ['171!', 'Factorial needs a whole number from 0 to 170 at position 4'],
    ['10^400', 'The result is too large to represent'],
    ['', 'The expression is empty'],
    ['('.repeat(80) + '1' + ')'.repeat(80), 'The expression is nested more than 64 levels deep'],
  ])('refuses %j: %s', (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(message);
  });

  it('as a tool: the value, or an error result the model sees', async () => {
    const registry = new ToolRegistry(builtinTools());
    expect(await registry.run({ name: 'calculator', input: { expression: '6 * 7' }, callId: 'c1' }, context())).toEqual(
      { content: '6 * 7 = 42', isError: false },
    );
    expect(
      await registry.run({ name: 'calculator', input: { expression: '6 *' }, callId: 'c2' }, context()),
    ).toMatchObject({ isError: true, content: expect.stringMatching(/^Cannot evaluate "6 \*"/) });
  });
});

/** Resolves when `promise` does, or rejects with `what` after `ms`: a test's own deadline. */
const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms);
    void promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });

const tlsFixture = (name: string) => fs.readFileSync(path.join(__dirname, 'fixtures', 'tls', name), 'utf8');

/** The first bytes of a text in each encoding http_fetch decodes: a body that then stops. */
const stalledText = 'A body that stops after its first bytes. '.repeat(50);
const stalledStarts: Record<string, Buffer> = {
  gzip: zlib.gzipSync(stalledText).subarray(0, 12),
  deflate: zlib.deflateSync(stalledText).subarray(0, 12),
  br: zlib.brotliCompressSync(stalledText).subarray(0, 12),
  identity: Buffer.from(stalledText.slice(0, 12)),
};

describe('http_fetch', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  /** Per path: resolves when the server saw that response's connection close. */
  const closed = new Map<string, Promise<void>>();
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      hits++;
      const url = request.url ?? '/';
      closed.set(url, new Promise((resolve) => response.once('close', () => resolve())));
      const stalled = /^\/stall\/(\w+)$/.exec(url)?.[1];
      if (stalled !== undefined) {
        response
          .writeHead(200, {
            'content-type': 'text/plain',
            ...(stalled === 'identity' ? {} : { 'content-encoding': stalled }),
          })
          .write(stalledStarts[stalled]);
      } else if (url === '/hop-streaming') {
        // A redirect whose body goes on for as long as the connection stays open.
        response.writeHead(302, { location: '/page', 'content-type': 'text/plain' });
        const writing = setInterval(() => response.write('x'.repeat(1024)), 5);
        response.once('close', () => clearInterval(writing));
      } else if (url === '/page')
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Exchange rate: 1 EUR = 1.08 USD');
      else if (url === '/big') response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
      else if (url === '/gzip')
        response
          .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
          .end(zlib.gzipSync(JSON.stringify({ a: 'y'.repeat(100_000) })));
      else if (url === '/image') response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(10));
      else if (url === '/hop') response.writeHead(302, { location: '/page' }).end();
      else if (url === '/away') response.writeHead(302, { location: 'http://evil.example.net/steal' }).end();
      else if (url === '/inside') response.writeHead(302, { location: 'http://internal.example.com/admin' }).end();
      else if (url === '/loop') response.writeHead(302, { location: '/loop' }).end();
      else if (url === '/hang') response.writeHead(200, { 'content-type': 'text/plain' }).write('partial');
      else response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const fetchWith = (options: Partial<HttpFetchOptions>, url: string) => {
    const registry = new ToolRegistry(
      builtinTools({
        hosts: [`127.0.0.1:${port}`, 'internal.example.com'],
        maxBytes: 1024,
        timeoutMs: 1000,
        resolve: async () => ['127.0.0.1'],
        ...options,
      }),
    );
    return registry.run({ name: 'http_fetch', input: { url }, callId: 'f1' }, context());
  };
  const at = (pathname: string) => `http://127.0.0.1:${port}${pathname}`;

  it('refuses everything while no host is allowed', async () => {
    const before = hits;
    const result = await fetchWith({ hosts: [] }, at('/page'));
    expect(result).toEqual({
      isError: true,
      content: `127.0.0.1:${port} is not on http_fetch's allow-list: no host is allowed (SKILLFLOW_HTTP_FETCH_HOSTS is empty).`,
    });
    expect(hits).toBe(before);
  });

  it('fetches text from an allowed host, with status, URL and type', async () => {
    expect(await fetchWith({}, at('/page'))).toEqual({
      isError: false,
      content: `HTTP 200 OK\nURL: ${at('/page')}\nContent-Type: text/plain\n\nExchange rate: 1 EUR = 1.08 USD`,
    });
    expect(await fetchWith({}, at('/missing'))).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^HTTP 404 Not Found/),
    });
  });

  it('caps the size, decompressed bodies included', async () => {
    const big = await fetchWith({}, at('/big'));
    expect(big.content).toContain(`${'x'.repeat(1024)}\n\n[truncated`);
    expect(big.content).not.toContain('x'.repeat(1025));
    const gzip = await fetchWith({}, at('/gzip'));
    expect(gzip.content).toMatch(/^HTTP 200 OK[\s\S]*\{"a":"y+\n\n\[truncated/);
  });

  it('returns text only', async () => {
    expect(await fetchWith({}, at('/image'))).toEqual({
      isError: true,
      content: 'The response is image/png, not text; http_fetch returns text only.',
    });
  });

  it('follows redirects on the list only, and not forever', async () => {
    expect((await fetchWith({}, at('/hop'))).content).toContain('Exchange rate');
    expect(await fetchWith({}, at('/away'))).toEqual({
      isError: true,
      content:
        "evil.example.net is not on http_fetch's allow-list: the allowed hosts are 127.0.0.1:" +
        port +
        ', internal.example.com.',
    });
    expect(await fetchWith({}, at('/loop'))).toEqual({
      isError: true,
      content: `${at('/loop')} redirects more than 5 times.`,
    });
  });

  it('never reaches a private address through a listed name (DNS rebinding included), nor the wrong port', async () => {
    expect(await fetchWith({}, 'http://internal.example.com/admin')).toEqual({
      isError: true,
      content:
        'internal.example.com resolves to an address that is not public; http_fetch does not reach private networks.',
    });
    expect(await fetchWith({}, at('/inside'))).toMatchObject({
      isError: true,
      content: expect.stringContaining('internal.example.com resolves to an address that is not public'),
    });
    // A name that resolves to a public address and then to a private one is connected to the checked address only.
    let lookups = 0;
    const rebinding = async () => (lookups++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    const before = hits;
    await fetchWith(
      { hosts: ['rebind.example.com'], resolve: rebinding, timeoutMs: 500 },
      'http://rebind.example.com/page',
    );
    expect(lookups).toBe(1);
    expect(hits).toBe(before);
    expect(await fetchWith({}, `http://127.0.0.1:${port + 1}/page`)).toMatchObject({
      isError: true,
      content: expect.stringContaining("is not on http_fetch's allow-list"),
    });
  });

  it('refuses other schemes and credentials', async () => {
    expect(await fetchWith({}, 'file:///etc/passwd')).toEqual({
      isError: true,
      content: 'The URL file:///etc/passwd: only http and https URLs can be fetched.',
    });
    expect(await fetchWith({}, `http://user:secret@127.0.0.1:${port}/page`)).toMatchObject({
      isError: true,
      content: expect.stringContaining('URLs with credentials are not fetched'),
    });
  });

  it('gives up at its time limit', async () => {
    expect(await fetchWith({ timeoutMs: 300 }, at('/hang'))).toEqual({
      isError: true,
      content: `http_fetch gave up on ${at('/hang')} after 300 ms.`,
    });
  });

  it('does not tell the model which private address a listed name resolves to', async () => {
    const result = await fetchWith(
      { resolve: async () => ['93.184.216.34', '10.20.30.40'] },
      'http://internal.example.com/admin',
    );
    expect(result).toEqual({
      isError: true,
      content:
        'internal.example.com resolves to an address that is not public; http_fetch does not reach private networks.',
    });
    expect(result.content).not.toContain('10.20.30.40');
  });

  it("closes a redirect's connection instead of reading its body", async () => {
    // The call's time limit, which closes whatever connection is still open, is far off.
    expect((await fetchWith({ timeoutMs: 30_000 }, at('/hop-streaming'))).content).toContain('Exchange rate');
    await within(closed.get('/hop-streaming')!, 3_000, "the redirect's connection was still open");
  });

  it('ends at its limit when the body stops, in every encoding, while garbage is collected', async () => {
    const encodings = Object.keys(stalledStarts);
    const urls = encodings.map((encoding) => at(`/stall/${encoding}`));
    const calls: HttpFetchCalls = {
      options: { hosts: [`127.0.0.1:${port}`], maxBytes: 1024, timeoutMs: 300 },
      urls,
      collectGarbageEveryMs: 20,
    };
    const { value } = await runWithBudget<SettledCall[]>(
      path.join(__dirname, 'support', 'http-fetch-calls.ts'),
      calls,
      5_000,
    );
    expect(value).toEqual(
      urls.map((url) => ({ url, result: { isError: true, content: `http_fetch gave up on ${url} after 300 ms.` } })),
    );
    // The calls closed their connections: a stalled server holds nothing of the worker's.
    await within(
      Promise.all(encodings.map((encoding) => closed.get(`/stall/${encoding}`))),
      5_000,
      'the stalled connections were not all closed',
    );
  });
});

describe('http_fetch over https', () => {
  let plain: http.Server;
  let secure: https.Server;
  const portOf = (server: http.Server) => (server.address() as AddressInfo).port;
  beforeAll(async () => {
    plain = http.createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/plain' }).end('plain text'),
    );
    secure = https.createServer(
      { cert: tlsFixture('loopback-cert.pem'), key: tlsFixture('loopback-key.pem') },
      (request, response) => {
        if (request.url === '/page') response.writeHead(200, { 'content-type': 'text/plain' }).end('secure text');
        else if (request.url === '/hop') response.writeHead(302, { location: '/page' }).end();
        else response.writeHead(302, { location: `http://127.0.0.1:${portOf(plain)}/page` }).end();
      },
    );
    await Promise.all(
      [plain, secure].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))),
    );
  });
  afterAll(async () => {
    for (const server of [plain, secure]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const fetchSecure = (pathname: string) => {
    const hosts = [`127.0.0.1:${portOf(plain)}`, `127.0.0.1:${portOf(secure)}`];
    const registry = new ToolRegistry(
      builtinTools({ hosts, maxBytes: 1024, timeoutMs: 2000, ca: tlsFixture('loopback-cert.pem') }),
    );
    return registry.run(
      { name: 'http_fetch', input: { url: `https://127.0.0.1:${portOf(secure)}${pathname}` }, callId: 'f1' },
      context(),
    );
  };

  it('follows redirects from https to https, never from https to http, even on the list', async () => {
    expect((await fetchSecure('/hop')).content).toContain('secure text');
    expect(await fetchSecure('/down')).toEqual({
      isError: true,
      content: `https://127.0.0.1:${portOf(secure)}/down redirects to http://127.0.0.1:${portOf(plain)}/page: http_fetch does not follow a redirect from https to http.`,
    });
  });
});

describe("isPublicAddress: http_fetch's address rules", () => {
  it.each([
    ['93.184.216.34', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['2606:2800:220:1:248:1893:25c8:1946', true],
    ['::1', false],
    ['fe80::1', false],
    // IPv4-mapped (::ffff:0:0/96), in both notations: the IPv4 address decides.
    ['::ffff:93.184.216.34', true],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:a01:203', false],
    // IPv4-translated (::ffff:0:0:0/96), which a translator turns into the IPv4 address it carries.
    ['::ffff:0:127.0.0.1', false],
    ['::ffff:0:7f00:1', false],
    ['::ffff:0:a9fe:a9fe', false],
    // A zone index names an interface of this host: never public.
    ['::ffff:127.0.0.1%1', false],
    ['2606:2800:220:1:248:1893:25c8:1946%eth0', false],
  ])('%s: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
