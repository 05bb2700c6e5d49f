import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../lib/config';
import { HttpError } from './errors';

/** Where `npm run build:web` (Vite, web/vite.config.mts) writes the web app. */
export const defaultWebAppDir = path.resolve(__dirname, '..', 'web', 'dist');
export const webAppPath = '/app/';

/**
 * Every /app response: scripts, styles and connections from this origin only (no inline script or style, no eval), no
 * framing, no referrer (the page's address never leaves it), no MIME sniffing.
 */
export const webAppHeaders: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Vite names what it builds under assets/ by content hash: such a file never changes, so it may be cached for good. */
const immutable = 'public, max-age=31536000, immutable';

/** Whether the folder holds a build (its index.html), as the start-up log and every request see it. */
export const webAppBuilt = (dir: string) => fs.existsSync(path.join(dir, 'index.html'));

export function describeWebApp(config: Pick<Config, 'appEnabled'>, dir = defaultWebAppDir): string {
  if (!config.appEnabled) return 'web app: off (SKILLFLOW_APP=off)';
  return webAppBuilt(dir)
    ? `web app at ${webAppPath} (from ${dir})`
    : `web app: no build in ${dir}, so ${webAppPath} answers 503; run npm run build:web (npm start and npm test build it)`;
}

/**
 * The web app at /app/ (SKILLFLOW_APP=off: not at all): the built files, index.html for any path without a file (the
 * page routes by its hash; a deep link still loads it), and the page's settings at /app/config.json. No key needed.
 */
export async function webAppRoutes(
  app: FastifyInstance,
  config: Pick<Config, 'appEnabled' | 'temporalUiUrl' | 'temporalNamespace'>,
  dir = defaultWebAppDir,
): Promise<void> {
  if (!config.appEnabled) return;
  const root = path.resolve(dir);
  await app.register(async (scope) => {
    await scope.register(fastifyStatic, { root, serve: false, dotfiles: 'ignore' });
    scope.addHook('onSend', async (_request, reply, payload) => {
      void reply.headers(webAppHeaders);
      return payload;
    });
    const hidden = { public: true };
    scope.get('/app', { config: hidden, schema: { hide: true } }, async (_request, reply) =>
      reply.redirect(webAppPath, 308),
    );
    scope.get('/app/config.json', { config: hidden, schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', 'no-cache').send({
        temporalUi: config.temporalUiUrl ? { url: config.temporalUiUrl, namespace: config.temporalNamespace } : null,
      }),
    );
    scope.get<{ Params: { '*': string } }>(
      '/app/*',
      { config: hidden, schema: { hide: true } },
      async (request, reply) => {
        if (!webAppBuilt(root)) return missingBuild(reply, root);
        const file = fileFor(root, request.params['*']);
        return reply
          .header('cache-control', file.startsWith('assets/') ? immutable : 'no-cache')
          .sendFile(file, { cacheControl: false });
      },
    );
  });
}

/** The file a path under /app/ names: itself when it is one, index.html for a page path, else a 404. */
function fileFor(root: string, wanted: string): string {
  const relative = wanted.split('/').filter(Boolean).join('/');
  if (relative === '') return 'index.html';
  const resolved = path.resolve(root, relative);
  const inside = resolved.startsWith(root + path.sep) && !relative.split('/').some((part) => part.startsWith('.'));
  if (inside && fs.statSync(resolved, { throwIfNoEntry: false })?.isFile()) return relative;
  if (!inside || path.extname(relative) !== '') throw new HttpError(404, 'not_found', `No file /app/${relative}.`);
  return 'index.html';
}

function missingBuild(reply: FastifyReply, root: string): FastifyReply {
  return reply
    .code(503)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>skillflow: web app not built</title></head>' +
        '<body><h1>The web app is not built</h1>' +
        `<p>The API serves it from <code>${escapeHtml(root)}</code>, which has no <code>index.html</code>. ` +
        'Run <code>npm run build:web</code> (<code>npm start</code> and <code>npm test</code> build it), then reload. ' +
        'The API itself works: see <a href="/docs">/docs</a>.</p></body></html>',
    );
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
