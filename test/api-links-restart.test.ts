import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../lib/dev-server';
import { aliceKey } from './support/api';

const root = path.resolve(__dirname, '..');

interface ApiProcess {
  base: string;
  stop(): Promise<void>;
}

/** api/server.ts as `npm start` runs it, without Redis, on the data dir given; ready once /healthz answers. */
async function startApi(dataDir: string, port: number): Promise<ApiProcess> {
  const address = process.env.SKILLFLOW_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('SKILLFLOW_TEST_TEMPORAL_ADDRESS is not set: run this file through jest.');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      TEMPORAL_ADDRESS: address,
      PORT: String(port),
      SKILLFLOW_DATA_DIR: dataDir,
      SKILLFLOW_API_KEYS: `${aliceKey}=alice`,
      SKILLFLOW_APP: 'off',
    },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API exited during start-up:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the API did not answer within 60 s:\n${output}`);
    }
    const healthy = await fetch(`${base}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    base,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const json = { 'content-type': 'application/json' };
const asAlice = { authorization: `Bearer ${aliceKey}` };

describe('answer links of an API without Redis', () => {
  let api: ApiProcess | undefined;
  afterEach(async () => {
    await api?.stop();
    api = undefined;
  });

  it('outlive its restart: a link made before works after, and a revocation made before holds after', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-links-restart-'));
    const port = await freePort();
    const restart = async () => {
      await api?.stop();
      api = await startApi(dataDir, port);
      return api.base;
    };
    let base = await restart();
    const session = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { ...asAlice, ...json },
      body: '{}',
    });
    expect(session.status).toBe(201);
    const sessionId = ((await session.json()) as { id: string }).id;
    const made = await fetch(`${base}/v1/sessions/${sessionId}/links`, {
      method: 'POST',
      headers: { ...asAlice, ...json },
      body: '{}',
    });
    expect(made.status).toBe(201);
    const link = (await made.json()) as { id: string; url: string };
    const token = new URL(link.url).hash.replace(/^#link=/, '');
    const exchange = async () => {
      const response = await fetch(`${base}/v1/links/exchange`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ token }),
      });
      const body = (await response.json()) as { error?: { code: string } };
      return [response.status, body.error?.code];
    };

    base = await restart();
    expect(await exchange()).toEqual([201, undefined]);
    const revoked = await fetch(`${base}/v1/sessions/${sessionId}/links/${link.id}`, {
      method: 'DELETE',
      headers: asAlice,
    });
    expect(revoked.status).toBe(204);

    base = await restart();
    expect(await exchange()).toEqual([401, 'link_revoked']);
    expect(fs.statSync(path.join(dataDir, 'links.json')).mode & 0o077).toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'links.json'), 'utf8')).not.toContain(token);
  }, 120_000);
});
