import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Projects {
  classifyTests(root: string): { unit: string[]; integration: string[] };
  serverVariables: string[];
}
// jest.projects.js is read by jest.config.js, which Node loads without TypeScript.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { classifyTests, serverVariables } = require('../jest.projects') as Projects;

const root = path.resolve(__dirname, '..');
const relative = (dir: string, files: string[]) => files.map((file) => path.relative(dir, file)).sort();

/** A tree of .ts files (names given without the extension: a quoted name of a real file would count as naming it). */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-projects-'));
  for (const [name, source] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.ts`), source);
  }
  return dir;
}

describe('the unit and integration projects', () => {
  it('a test file is an integration test when it, or a test file it imports or names, uses the dev server', () => {
    const [address, , bundle] = serverVariables;
    const dir = tree({
      'test/direct.test': `const at = process.env.${address};`,
      'test/imported.test': "import { env } from './support/env';",
      'test/support/env': "export { TestEnv as env } from './server-env';",
      'test/support/server-env': `export class TestEnv { bundle = process.env.${bundle}; }`,
      'test/started.test': "spawn(node, [path.join(__dirname, 'support', 'projects-fixture-process.ts')]);",
      'test/support/projects-fixture-process': "import { env } from './env';",
      'test/nested/required.test': "const x = require('../support/env');",
      'test/pure.test': "import { helper } from './support/helper';\nimport { reduce } from '../core/reduce';",
      'test/support/helper': "import { other } from './other'; import fs from 'node:fs';",
      'test/support/other': "export const other = 'projects-fixture-none.ts';",
      'test/fixtures/program.test': `process.env.${address};`,
    });
    const { unit, integration } = classifyTests(dir);
    const names = (files: string[]) => relative(dir, files).map((file) => file.replace(/\.ts$/, ''));
    expect(names(integration)).toEqual([
      'test/direct.test',
      'test/imported.test',
      'test/nested/required.test',
      'test/started.test',
    ]);
    expect(names(unit)).toEqual(['test/pure.test']);
  });

  it('sorts this repository: the policy tables are unit tests, a turn through a worker is an integration test', () => {
    // Named without quotes around whole file names: a quoted name of an integration file would make this file one.
    const files = (names: string[]) => names.map((name) => `test/${name}.test.ts`);
    const { unit, integration } = classifyTests(root);
    expect(relative(root, unit)).toEqual(
      expect.arrayContaining(files(['policy', 'jest-projects', 'skills/plan-parser', 'model-activity'])),
    );
    expect(relative(root, integration)).toEqual(
      expect.arrayContaining(files(['foundation-turn', 'handover', 'replay', 'api-live-process'])),
    );
    expect(unit.length + integration.length).toBe(new Set([...unit, ...integration]).size);
  });

  it('a unit test sees none of what the global setup hands out, even in a run that started a server', () => {
    for (const name of serverVariables) expect(process.env[name]).toBeUndefined();
  });

  it("the policy tests' patterns, which npm test's unit run leaves to the coverage run, match exactly its files", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { testPatterns } = require('../jest.policy-tests') as { testPatterns: string[] };
    const { unit, integration } = classifyTests(root);
    const left = [...unit, ...integration].filter((file) =>
      testPatterns.some((pattern) => new RegExp(pattern).test(file)),
    );
    const runFiles = fs.readdirSync(path.join(root, 'test')).filter((name) => /^run-.*\.test\.ts$/.test(name));
    expect(runFiles.length).toBeGreaterThan(0);
    expect(relative(root, left)).toEqual(
      ['test/json-validator.test.ts', 'test/policy.test.ts', ...runFiles.map((name) => `test/${name}`)].sort(),
    );
    expect(left.every((file) => unit.includes(file))).toBe(true);
  });
});
