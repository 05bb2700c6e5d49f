import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { StreamTokens } from '../api/stream-tokens';
import { serveCodec } from '../lib/codec/serve';
import { loadConfig } from '../lib/config';
import { aliceKey, bobKey, buildTestApp } from './support/api';

/**
 * Rate limits and the client's address, without Temporal: the routes these tests reach answer from the skill
 * catalog, or are refused before their handler runs.
 */
const noTemporal = { options: { namespace: 'default' } } as unknown as Client;
const skills = { catalog: async () => ({ skills: [], disabled: [], problems: [] }) };
const carolKey = 'carol-key-0123456789abcdef';
const carolSecondKey = 'carol-second-key-0123456789';
const secret = randomBytes(32);

/** Apps take seconds to get ready on a loaded machine: two, shared by the tests, each test from its own addresses and users. */
let direct: FastifyInstance;
let proxied: FastifyInstance;
const keys = `${aliceKey}=alice,${bobKey}=bob,${carolKey}=carol,${carolSecondKey}=carol`;
const limits = { SKILLFLOW_API_KEYS: keys, SKILLFLOW_ADDRESS_RATE_LIMIT: '3', SKILLFLOW_RATE_LIMIT: '6' };

beforeAll(async () => {
  [direct, proxied] = await Promise.all([
    appWith(limits),
    appWith({ ...limits, SKILLFLOW_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1' }),
  ]);
});
afterAll(async () => {
  await Promise.all([direct?.close(), proxied?.close()]);
});

async function appWith(env: Record<string, string>): Promise<FastifyInstance> {
  const { app } = await buildTestApp(
    noTemporal,
    'limits',
    { SKILLFLOW_SESSION_IDLE_MS: '0', ...env },
    { skills, streamTokenSecret: secret },
  );
  await app.ready();
  return app;
}

type Inject = { remoteAddress: string; headers?: Record<string, string> };
const listSkills = (app: FastifyInstance, key: string, { remoteAddress, headers = {} }: Inject) =>
  app.inject({
    method: 'GET',
    url: '/v1/skills',
    remoteAddress,
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
const statusesOf = async (responses: Promise<{ statusCode: number }>[]) =>
  (await Promise.all(responses)).map((response) => response.statusCode);
const wrongKey = (i: number) => `wrong-key-${i}-0123456789abc`;

describe('failed authentications, per address', () => {
  it('are refused beyond the limit, but a valid key from the same address is not', async () => {
    const from = { remoteAddress: '192.0.2.7' };
    expect(await statusesOf([0, 1, 2].map((i) => listSkills(direct, wrongKey(i), from)))).toEqual([401, 401, 401]);
    const locked = await listSkills(direct, wrongKey(3), from);
    expect([locked.statusCode, locked.json().error.code]).toEqual([429, 'rate_limited']);
    expect(locked.json().error.message).toContain('failed authentications per address');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    // Someone else behind the same address, with a valid key: served, and never counted.
    for (let i = 0; i < 3; i += 1) expect((await listSkills(direct, aliceKey, from)).statusCode).toBe(200);
    expect((await listSkills(direct, wrongKey(4), from)).statusCode).toBe(429);
    expect((await listSkills(direct, wrongKey(4), { remoteAddress: '192.0.2.8' })).statusCode).toBe(401);
  });

  it('count an IPv6 client by its /64, and an IPv4-mapped address as its IPv4 address', async () => {
    const from = (remoteAddress: string, i: number) => listSkills(direct, wrongKey(i), { remoteAddress });
    const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:0db8:0001:0002:1::', '2001:db8:1:2:0:0:0:7'];
    expect(await statusesOf(sameNetwork.map(from))).toEqual([401, 401, 401, 429]);
    expect((await from('2001:db8:1:3::1', 4)).statusCode).toBe(401);
    expect(
      await statusesOf([from('::ffff:198.51.100.3', 5), from('198.51.100.3', 6), from('::ffff:198.51.100.3', 7)]),
    ).toEqual([401, 401, 401]);
    expect((await from('198.51.100.3', 8)).statusCode).toBe(429);
  });

  it('come from X-Forwarded-For only when the peer is a trusted proxy (SKILLFLOW_TRUSTED_PROXIES)', async () => {
    const via = (app: FastifyInstance, client: string, i: number, remoteAddress = '10.1.2.3') =>
      listSkills(app, wrongKey(i), { remoteAddress, headers: { 'x-forwarded-for': client } });
    expect(await statusesOf([0, 1, 2, 3].map((i) => via(proxied, '203.0.113.5', i)))).toEqual([401, 401, 401, 429]);
    // Another client behind the same proxy has its own count.
    expect((await via(proxied, '203.0.113.6', 4)).statusCode).toBe(401);
    // A client that is not a proxy cannot pick its address: each of its guesses counts against its own.
    expect(await statusesOf([0, 1, 2, 3].map((i) => via(proxied, `203.0.113.${100 + i}`, i, '198.51.100.9')))).toEqual([
      401, 401, 401, 429,
    ]);
    // Nor can it hide behind a trusted proxy by prepending a forged hop: the proxy appends the one it saw.
    expect((await via(proxied, '203.0.113.77, 203.0.113.5', 5)).statusCode).toBe(429);

    // Without the setting, X-Forwarded-For is ignored: everyone behind the proxy is one address.
    expect(await statusesOf([0, 1, 2, 3].map((i) => via(direct, `203.0.113.${i}`, i)))).toEqual([401, 401, 401, 429]);
  });

  it('SKILLFLOW_TRUSTED_PROXIES takes addresses and CIDR ranges, and says how to fix anything else', () => {
    expect(loadConfig({ SKILLFLOW_TRUSTED_PROXIES: '10.0.0.0/8 fd00::/8,192.0.2.1' }).trustedProxies).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.1',
    ]);
    expect(loadConfig({}).trustedProxies).toEqual([]);
    for (const entry of ['10.0.0.0/33', 'proxy.example.com', '10.0.0/8', 'fd00::/129', '10.0.0.0/8/1']) {
      expect(() => loadConfig({ SKILLFLOW_TRUSTED_PROXIES: entry })).toThrow(
        `SKILLFLOW_TRUSTED_PROXIES entry ${JSON.stringify(entry)} must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8)`,
      );
    }
  });
});

describe('with auth on', () => {
  it('checks neither Host nor Origin (the key is what counts)', async () => {
    const headers = { host: 'attacker.example:3000', origin: 'http://attacker.example' };
    expect(
      (await direct.inject({ method: 'GET', url: '/v1/skills', remoteAddress: '192.0.2.30', headers })).statusCode,
    ).toBe(401);
    expect((await listSkills(direct, aliceKey, { remoteAddress: '192.0.2.30', headers })).statusCode).toBe(200);
  });
});

describe('requests, per user', () => {
  it("count every key and stream token of a user in one budget; another user's is apart", async () => {
    const from = { remoteAddress: '192.0.2.20' };
    const first = [carolKey, carolSecondKey, carolKey, carolSecondKey, carolKey].map((key) =>
      listSkills(direct, key, from),
    );
    expect(await statusesOf(first)).toEqual([200, 200, 200, 200, 200]);
    const last = await listSkills(direct, carolSecondKey, from);
    expect([last.statusCode, last.headers['x-ratelimit-remaining']]).toEqual([200, '0']);
    const limited = await listSkills(direct, carolKey, from);
    expect([limited.statusCode, limited.json().error.code]).toEqual([429, 'rate_limited']);
    expect(limited.json().error.message).toContain('per user');
    // A stream token of carol's counts in her budget too (refused before its route asks Temporal anything).
    const turnId = 'turn-0123456789abcdef0123-1';
    const { token } = new StreamTokens(secret, 60_000).issue({ id: 'carol', operator: false }, turnId);
    const streamed = await direct.inject({ method: 'GET', url: `/v1/turns/${turnId}/events?token=${token}`, ...from });
    expect([streamed.statusCode, streamed.json().error.code]).toEqual([429, 'rate_limited']);
    expect((await listSkills(direct, bobKey, from)).statusCode).toBe(200);
  });
});

describe('the codec', () => {
  it("refuses failed authentications beyond the limit per address, never a valid key, and names no key's user", async () => {
    const operatorKey = 'codec-limits-operator-key-0123456789';
    const userKey = 'codec-limits-user-key-0123456789abc';
    const config = loadConfig({
      SKILLFLOW_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-codec-limits-')),
      SKILLFLOW_API_KEYS: `${operatorKey}=ops:operator,${userKey}=alice`,
      SKILLFLOW_CODEC_UI_TOKEN: 'codec-limits-ui-token-0123456789abcdefgh',
      SKILLFLOW_ADDRESS_RATE_LIMIT: '3',
    });
    const codec = await serveCodec(config, () => undefined, 0);
    try {
      const decode = async (pathname: string, key?: string) => {
        const response = await fetch(`${codec.url}${pathname}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: '{"payloads": []}',
        });
        return {
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: (await response.json()) as { error?: { code: string; message: string } },
        };
      };
      const forbidden = await decode('/decode', userKey);
      expect([forbidden.status, forbidden.body.error?.code]).toEqual([403, 'forbidden']);
      expect(forbidden.body.error?.message).not.toContain('alice');
      expect(
        (await Promise.all([0, 1, 2].map((i) => decode('/decode', wrongKey(i))))).map((answer) => answer.status),
      ).toEqual([401, 401, 401]);
      const limited = await decode('/decode', wrongKey(3));
      expect([limited.status, limited.body.error?.code]).toEqual([429, 'rate_limited']);
      expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      expect(limited.body.error?.message).toContain('SKILLFLOW_ADDRESS_RATE_LIMIT');
      expect((await decode(`/ui/${'x'.repeat(40)}/decode`)).status).toBe(429);
      // A valid key, or the UI's endpoint, from the same address: still served.
      expect((await decode('/decode', operatorKey)).status).toBe(200);
      expect((await decode(new URL(codec.uiEndpoint).pathname + '/decode')).status).toBe(200);
    } finally {
      await codec.close();
    }
  });
});
