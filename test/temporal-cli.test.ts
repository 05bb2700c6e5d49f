import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachedCliPath, findTemporalCli, TemporalCliError } from '../lib/temporal-cli';

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

    expect(findTemporalCli(cacheDir, { TEMPORAL_CLI: configured, PATH: path.dirname(onPath) })).toEqual({ path: configured, source: 'TEMPORAL_CLI' });
    expect(findTemporalCli(cacheDir, { PATH: path.dirname(onPath) })).toEqual({ path: onPath, source: 'PATH' });
    expect(findTemporalCli(cacheDir, { PATH: path.join(dir, 'empty') })).toEqual({ path: cached, source: 'cache' });
    fs.rmSync(cached);
    expect(findTemporalCli(cacheDir, { PATH: path.join(dir, 'empty') })).toBeUndefined();
  });

  it('rejects a TEMPORAL_CLI that is not an executable file, saying what to do', () => {
    expect(() => findTemporalCli(dir, { TEMPORAL_CLI: path.join(dir, 'missing') })).toThrow(TemporalCliError);
    expect(() => findTemporalCli(dir, { TEMPORAL_CLI: path.join(dir, 'missing') })).toThrow(/Point it at a temporal binary or unset it/);
  });
});
