import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTemporalCli, cachedCliPath, findTemporalCli, TemporalCliError, userCacheDir } from '../lib/temporal-cli';

function executable(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\necho temporal\n', { mode: 0o755 });
  return file;
}

describe('finding the Temporal CLI', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-cli-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prefers TEMPORAL_CLI, then PATH, then the cache', () => {
    const configured = executable(path.join(dir, 'configured', 'temporal'));
    const onPath = executable(path.join(dir, 'bin', 'temporal'));
    const cacheDir = path.join(dir, 'cache');
    const cached = executable(cachedCliPath(cacheDir));

    expect(findTemporalCli(cacheDir, { TEMPORAL_CLI: configured, PATH: path.dirname(onPath) })).toEqual({
      path: configured,
      source: 'TEMPORAL_CLI',
    });
    expect(findTemporalCli(cacheDir, { PATH: path.dirname(onPath) })).toEqual({ path: onPath, source: 'PATH' });
    expect(findTemporalCli(cacheDir, { PATH: path.join(dir, 'empty') })).toEqual({ path: cached, source: 'cache' });
    fs.rmSync(cached);
    expect(findTemporalCli(cacheDir, { PATH: path.join(dir, 'empty') })).toBeUndefined();
  });

  it('rejects a TEMPORAL_CLI that is not an executable file, saying what to do', () => {
    expect(() => findTemporalCli(dir, { TEMPORAL_CLI: path.join(dir, 'missing') })).toThrow(TemporalCliError);
    expect(() => findTemporalCli(dir, { TEMPORAL_CLI: path.join(dir, 'missing') })).toThrow(
      /Point it at a temporal binary or unset it/,
    );
  });

  it("caches builds per user: SKILLFLOW_CACHE_DIR, else XDG_CACHE_HOME, else the platform's cache folder", () => {
    expect(userCacheDir({ SKILLFLOW_CACHE_DIR: '/srv/cache', XDG_CACHE_HOME: '/x' }, 'linux', '/home/u')).toBe(
      '/srv/cache',
    );
    expect(userCacheDir({ XDG_CACHE_HOME: '/x/cache' }, 'linux', '/home/u')).toBe('/x/cache/skillflow');
    expect(userCacheDir({ XDG_CACHE_HOME: 'relative' }, 'linux', '/home/u')).toBe('/home/u/.cache/skillflow');
    expect(userCacheDir({}, 'linux', '/home/u')).toBe('/home/u/.cache/skillflow');
    expect(userCacheDir({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Caches/skillflow');
  });

  it('reports how far a build is: packages compiled of the total', async () => {
    const fakeBin = path.join(dir, 'fake-go');
    fs.mkdirSync(fakeBin);
    fs.writeFileSync(
      path.join(fakeBin, 'go'),
      [
        '#!/bin/sh',
        'case "$1" in',
        '  mod) echo "{\\"Dir\\": \\"$FAKE_MODULE_DIR\\"}" ;;',
        '  list) printf "p1\\np2\\np3\\np4\\n" ;;',
        '  install) for p in p1 p2 p3; do echo "example.com/$p"; sleep 0.2; done; printf "#!/bin/sh\\n" > "$GOBIN/temporal" ;;',
        'esac',
      ].join('\n'),
      { mode: 0o755 },
    );
    const lines: string[] = [];
    const cacheDir = path.join(dir, 'cache');
    const built = await buildTemporalCli(cacheDir, (line) => lines.push(line), {
      tickMs: 100,
      env: { PATH: `${fakeBin}:/usr/bin:/bin`, FAKE_MODULE_DIR: dir },
    });
    expect(built).toEqual({ path: cachedCliPath(cacheDir), source: 'built' });
    expect(lines[0]).toContain(`into ${cacheDir} (once per user`);
    expect(lines.some((line) => /building Temporal CLI: [1-3] of 4 packages compiled \(\d+%\), \d+s$/.test(line))).toBe(
      true,
    );
    expect(lines.at(-1)).toMatch(/^Built the Temporal CLI in \d+s; cached at /);
  });
});
