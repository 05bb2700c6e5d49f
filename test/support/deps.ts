import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDeps } from '../../activities';

export const bundledSkillsDir = path.resolve(__dirname, '..', '..', 'skills');

/** Activity dependencies for a test worker: the fake model, and a skills folder with a data dir of its own. */
export function testDeps(fakeUrl: string, options: { skillsDir?: string; dataDir?: string } = {}): ActivityDeps {
  return {
    model: { apiKey: 'test-key', baseURL: fakeUrl, model: 'claude-test', maxTokens: 1024, timeoutMs: 20_000 },
    skills: {
      skillsDir: options.skillsDir ?? bundledSkillsDir,
      dataDir: options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-data-')),
    },
  };
}
