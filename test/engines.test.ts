import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));

/** 20.x.y as a number to compare, or null when a range says nothing of Node 20 (or excludes it). */
function node20Minimum(range: string): number | null {
  const match = /(?:\^|>=\s*)20\.(\d+)(?:\.(\d+))?/.exec(range);
  return match ? Number(match[1]) * 1000 + Number(match[2] ?? 0) : null;
}

/**
 * Runtime dependencies that declare only Node 22 yet run on 20: each is exercised on Node 20 by the suite (the docs
 * routes serve files through @fastify/static; Fastify's inject and the MCP SDK's HTTP server parse cookies).
 */
const declaredNewerButRunOn20 = new Set(['node_modules/content-disposition', 'node_modules/cookie']);

describe('package.json engines', () => {
  const required = readJson('package.json').engines.node as string;
  const [major, minor, patch] = required
    .replace(/^>=\s*/, '')
    .split('.')
    .map(Number);

  it('is a lower bound on Node 20', () => {
    expect(required).toMatch(/^>=20\.\d+\.\d+$/);
  });

  it('is at least what every runtime dependency asks of Node 20', () => {
    const ours = minor * 1000 + patch;
    const packages = Object.entries(
      readJson('package-lock.json').packages as Record<string, { dev?: boolean; engines?: { node?: string } }>,
    );
    const runtime = packages.filter(([name, info]) => name !== '' && !info.dev && info.engines?.node);
    const needMore = runtime
      .filter(([, info]) => (node20Minimum(info.engines!.node!) ?? 0) > ours)
      .map(([name, info]) => `${name} ${info.engines!.node}`);
    const exclude20 = runtime
      .filter(
        ([name, info]) => /^>=\s*(2[1-9]|[3-9]\d)/.test(info.engines!.node!) && !declaredNewerButRunOn20.has(name),
      )
      .map(([name, info]) => `${name} ${info.engines!.node}`);
    expect(exclude20).toEqual([]);
    expect(needMore).toEqual([]);
  });

  it('is what this process runs on, at least', () => {
    const [m, n, p] = process.versions.node.split('.').map(Number);
    expect(m * 1e6 + n * 1e3 + p).toBeGreaterThanOrEqual(major * 1e6 + minor * 1e3 + patch);
  });
});
