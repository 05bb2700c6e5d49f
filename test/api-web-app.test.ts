import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandling } from '../api/errors';
import { describeWebApp, webAppRoutes } from '../api/web-app';
import { loadConfig } from '../lib/config';
import { buildTestApp } from './support/api';

/** The web app at /app: its files, their cache and security headers, and what answers without a build. */
describe('API web app (/app)', () => {
  const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
  const client = new Client({ connection });
  const apps: FastifyInstance[] = [];
  const built = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-web-'));
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-web-empty-'));
  const script = 'console.log("the app");\n';

  beforeAll(() => {
    fs.mkdirSync(path.join(built, 'assets'));
    fs.writeFileSync(
      path.join(built, 'index.html'),
      '<!doctype html><html><head><script type="module" src="/app/assets/index-B9OTJJx7.js"></script></head><body></body></html>',
    );
    fs.writeFileSync(path.join(built, 'assets', 'index-B9OTJJx7.js'), script);
    fs.writeFileSync(path.join(built, 'assets', 'index-DsXlUJmQ.css'), 'body{margin:0}');
    fs.writeFileSync(path.join(built, '.source-digest'), 'abc');
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await connection.close();
    fs.rmSync(built, { recursive: true, force: true });
    fs.rmSync(empty, { recursive: true, force: true });
  });

  async function appWith(env: Record<string, string> = {}, appDir = built): Promise<FastifyInstance> {
    const { app } = await buildTestApp(client, 'web-app', env, { appDir });
    apps.push(app);
    return app;
  }

  let app: FastifyInstance;
  beforeAll(async () => {
    app = await appWith();
  });

  it('serves the build without a key: index.html for pages, hashed assets cached for good, dotfiles not at all', async () => {
    const bare = await app.inject({ method: 'GET', url: '/app' });
    expect([bare.statusCode, bare.headers.location]).toEqual([308, '/app/']);

    for (const url of ['/app/', '/app/inbox', '/app/turn/turn-abc-1']) {
      const page = await app.inject({ method: 'GET', url });
      expect({ url, status: page.statusCode, type: page.headers['content-type'] }).toEqual({
        url,
        status: 200,
        type: 'text/html; charset=utf-8',
      });
      expect(page.headers['cache-control']).toBe('no-cache');
      expect(page.body).toContain('/app/assets/index-B9OTJJx7.js');
    }
    const asset = await app.inject({ method: 'GET', url: '/app/assets/index-B9OTJJx7.js' });
    expect([asset.statusCode, asset.body]).toEqual([200, script]);
    expect(asset.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(
      (await app.inject({ method: 'GET', url: '/app/assets/index-DsXlUJmQ.css' })).headers['content-type'],
    ).toMatch(/^text\/css/);
    expect((await app.inject({ method: 'HEAD', url: '/app/' })).statusCode).toBe(200);

    for (const url of [
      '/app/assets/gone-123.js',
      '/app/.source-digest',
      '/app/%2e%2e/package.json',
      '/app/..%2fpackage.json',
    ])
      expect({ url, status: (await app.inject({ method: 'GET', url })).statusCode }).toEqual({ url, status: 404 });
  });

  it('sends a Content-Security-Policy without inline script, and refuses framing, on every /app response', async () => {
    for (const url of ['/app/', '/app/assets/index-B9OTJJx7.js', '/app/config.json', '/app/assets/gone.js']) {
      const response = await app.inject({ method: 'GET', url });
      const csp = String(response.headers['content-security-policy']);
      expect({ url, csp }).toEqual({ url, csp: expect.stringContaining("script-src 'self'") });
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await app.inject({ method: 'GET', url: '/healthz' })).headers['content-security-policy']).toBeUndefined();
  });

  it('tells the page where the Temporal UI is, when it is known', async () => {
    expect((await (await appWith()).inject({ method: 'GET', url: '/app/config.json' })).json()).toEqual({
      temporalUi: null,
    });
    const withUi = await appWith({ SKILLFLOW_TEMPORAL_UI_URL: 'http://localhost:8233/', TEMPORAL_NAMESPACE: 'exams' });
    const config = await withUi.inject({ method: 'GET', url: '/app/config.json' });
    expect(config.json()).toEqual({ temporalUi: { url: 'http://localhost:8233', namespace: 'exams' } });
    expect(config.headers['cache-control']).toBe('no-cache');
  });

  /** The /app routes alone (api/web-app.ts), for what does not need the whole app around them. */
  async function webAppOnly(appEnabled: boolean, dir: string): Promise<FastifyInstance> {
    const bare = Fastify();
    installErrorHandling(bare);
    await webAppRoutes(bare, { appEnabled, temporalNamespace: 'default' }, dir);
    apps.push(bare);
    return bare;
  }

  it('answers 503 with what to run when there is no build, and nothing at all with SKILLFLOW_APP=off', async () => {
    const missing = await webAppOnly(true, empty);
    const page = await missing.inject({ method: 'GET', url: '/app/' });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('npm run build:web');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(describeWebApp({ appEnabled: true }, empty)).toContain('run npm run build:web');
    expect(describeWebApp({ appEnabled: true }, built)).toBe(`web app at /app/ (from ${built})`);

    expect(loadConfig({ SKILLFLOW_APP: 'off' }).appEnabled).toBe(false);
    const off = await webAppOnly(false, built);
    for (const url of ['/app', '/app/', '/app/assets/index-B9OTJJx7.js', '/app/config.json'])
      expect({ url, status: (await off.inject({ method: 'GET', url })).statusCode }).toEqual({ url, status: 404 });
    expect(describeWebApp({ appEnabled: false })).toContain('SKILLFLOW_APP=off');
  });

  it("with auth off, answers only requests addressed to this machine and pages of its own origin (the hardening's checks)", async () => {
    const local = await appWith({
      SKILLFLOW_AUTH: 'off',
      SKILLFLOW_TEMPORAL_UI_URL: 'http://localhost:8233/',
      TEMPORAL_NAMESPACE: 'exams',
    });
    expect((await local.inject({ method: 'GET', url: '/app/', headers: { host: 'localhost' } })).statusCode).toBe(200);
    const rebound = await local.inject({ method: 'GET', url: '/app/', headers: { host: 'attacker.example' } });
    expect([rebound.statusCode, rebound.json().error.code]).toEqual([403, 'host_not_allowed']);
    const ownPage = await local.inject({
      method: 'GET',
      url: '/app/config.json',
      headers: { host: 'localhost', origin: 'http://localhost' },
    });
    expect([ownPage.statusCode, ownPage.json()]).toEqual([
      200,
      { temporalUi: { url: 'http://localhost:8233', namespace: 'exams' } },
    ]);
    const foreign = await local.inject({
      method: 'GET',
      url: '/app/config.json',
      headers: { host: 'localhost', origin: 'https://attacker.example' },
    });
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([403, 'origin_not_allowed']);
  });
});
