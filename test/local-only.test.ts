import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { serveCodec, type RunningCodec } from '../lib/codec/serve';
import { loadConfig } from '../lib/config';
import { buildTestApp } from './support/api';
import { WsClient } from './support/stream-clients';

/**
 * DNS rebinding and cross-site requests with auth off: a page that points its own domain at 127.0.0.1 sends its own
 * name as Host; a page of another site sends its Origin. Both servers, no Temporal: the routes reached answer from the
 * skill catalog, or find no turn. With auth on neither is checked: test/api-limits.test.ts "with auth on".
 */
const noTurns = {
  options: { namespace: 'default' },
  workflow: {
    getHandle: (id: string) => ({
      describe: () => Promise.reject(new WorkflowNotFoundError('not found', id, undefined)),
    }),
  },
} as unknown as Client;
const skills = { catalog: async () => ({ skills: [], disabled: [], problems: [] }) };
const turnId = 'turn-0123456789abcdef0123-1';

interface Answer {
  status: number;
  body: { error?: { code: string; message: string } };
}

/** A request with the Host and Origin a browser would send: fetch cannot set Host. */
function send(
  port: number,
  method: string,
  pathname: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method, path: pathname, headers: { 'content-type': 'application/json', ...headers } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : {} }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const outcomeOf = ({ status, body }: Answer) => [status, body.error?.code ?? null];

describe('the API with SKILLFLOW_AUTH=off', () => {
  let open: FastifyInstance;
  let port: number;

  async function listening(env: Record<string, string>): Promise<[FastifyInstance, number]> {
    const { app } = await buildTestApp(noTurns, 'local-only', { SKILLFLOW_SESSION_IDLE_MS: '0', ...env }, { skills });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return [app, (app.server.address() as AddressInfo).port];
  }

  beforeAll(async () => {
    [open, port] = await listening({ SKILLFLOW_AUTH: 'off', SKILLFLOW_CORS_ORIGINS: 'http://localhost:5173' });
  });
  afterAll(async () => {
    await open?.close();
  });

  const get = (headers: Record<string, string>, pathname = '/v1/skills') => send(port, 'GET', pathname, headers);

  it('answers requests addressed to a loopback name with its port, and refuses any other Host, saying why and what to set', async () => {
    for (const name of ['localhost', '127.0.0.1', '[::1]', 'LOCALHOST'])
      expect({ name, status: (await get({ host: `${name}:${port}` })).status }).toEqual({ name, status: 200 });
    for (const host of [
      `attacker.example:${port}`,
      'localhost',
      `localhost:${port + 1}`,
      `127.0.0.2:${port}`,
      `localhost.attacker.example:${port}`,
    ]) {
      expect({ host, outcome: outcomeOf(await get({ host })) }).toEqual({ host, outcome: [403, 'host_not_allowed'] });
    }
    const refused = await get({ host: `attacker.example:${port}` });
    expect(refused.body.error?.message).toContain(`addressed to localhost:${port}, 127.0.0.1:${port}, [::1]:${port}`);
    expect(refused.body.error?.message).toContain('SKILLFLOW_AUTH=on');
    // Public routes too: the docs are served to loopback names only.
    expect((await get({ host: `attacker.example:${port}` }, '/docs/json')).status).toBe(403);
  });

  it("takes browser requests from its own pages and SKILLFLOW_CORS_ORIGINS, and refuses other origins'", async () => {
    const host = `localhost:${port}`;
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, 'http://localhost:5173']) {
      expect({ origin, status: (await get({ host, origin })).status }).toEqual({ origin, status: 200 });
    }
    // The docs page calls the API from its own origin.
    expect((await get({ host, origin: `http://localhost:${port}` }, '/docs/json')).status).toBe(200);
    for (const origin of [
      'http://attacker.example',
      `http://attacker.example:${port}`,
      'http://localhost:8080',
      'null',
      `https://127.0.0.1:${port + 1}`,
    ]) {
      expect({ origin, outcome: outcomeOf(await get({ host, origin })) }).toEqual({
        origin,
        outcome: [403, 'origin_not_allowed'],
      });
    }
    const refused = await send(port, 'POST', '/v1/sessions', { host, origin: 'http://attacker.example' }, '{}');
    expect(outcomeOf(refused)).toEqual([403, 'origin_not_allowed']);
    expect(refused.body.error?.message).toContain('SKILLFLOW_CORS_ORIGINS (http://localhost:5173)');
  });

  it('checks WebSocket upgrades too', async () => {
    const url = `ws://127.0.0.1:${port}/v1/turns/${turnId}/ws`;
    const upgrade = (headers: Record<string, string>) =>
      WsClient.open(url, headers).then(
        () => ({ status: 101 }),
        (err: { status: number; body: string }) => err,
      );
    const refusedHost = await upgrade({ host: `attacker.example:${port}` });
    expect([refusedHost.status, JSON.parse((refusedHost as { body: string }).body).error.code]).toEqual([
      403,
      'host_not_allowed',
    ]);
    const refusedOrigin = await upgrade({ origin: 'http://attacker.example' });
    expect([refusedOrigin.status, JSON.parse((refusedOrigin as { body: string }).body).error.code]).toEqual([
      403,
      'origin_not_allowed',
    ]);
    // From its own page the upgrade gets as far as the turn, which does not exist.
    expect((await upgrade({ origin: `http://127.0.0.1:${port}` })).status).toBe(404);
  });
});

describe('the codec with SKILLFLOW_AUTH=off', () => {
  let codec: RunningCodec;
  let port: number;
  const uiOrigin = 'http://localhost:8233';

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-local-only-'));
    codec = await serveCodec(loadConfig({ SKILLFLOW_AUTH: 'off', SKILLFLOW_DATA_DIR: dataDir }), () => undefined, 0);
    port = Number(new URL(codec.url).port);
  });
  afterAll(async () => {
    await codec?.close();
  });

  const decode = (headers: Record<string, string>) => send(port, 'POST', '/decode', headers, '{"payloads": []}');

  it('decodes for requests addressed to a loopback name with its port, from no page, its own, or the Temporal UI', async () => {
    expect((await decode({ host: `127.0.0.1:${port}` })).status).toBe(200);
    expect((await decode({ host: `localhost:${port}`, origin: uiOrigin })).status).toBe(200);
    expect((await decode({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(200);
  });

  it('refuses another Host or Origin, saying why and what to set', async () => {
    const host = await decode({ host: `attacker.example:${port}` });
    expect(outcomeOf(host)).toEqual([403, 'host_not_allowed']);
    expect(host.body.error?.message).toContain('the codec answers only requests addressed to');
    const origin = await decode({ host: `127.0.0.1:${port}`, origin: 'http://attacker.example' });
    expect(outcomeOf(origin)).toEqual([403, 'origin_not_allowed']);
    expect(origin.body.error?.message).toContain(`SKILLFLOW_CODEC_UI_ORIGINS (${uiOrigin}, http://127.0.0.1:8233)`);
  });
});
