/**
 * Which test files need the suite's Temporal dev server: those that use what its global setup provides (the
 * environment variables below), directly or through the files under test/ they import or name (a process they start,
 * say). Everything else is a unit test and runs without a server. The rule reads the files themselves, so no list can
 * drift; and the unit project removes the variables (jest.unit-setup.js), so a unit test that reaches for the server
 * fails instead of passing by luck.
 */
const fs = require('node:fs');
const path = require('node:path');

/** What the global setup (test/support/global-setup.ts) hands to the tests. */
const serverVariables = [
  'SKILLFLOW_TEST_TEMPORAL_ADDRESS',
  'SKILLFLOW_TEST_TEMPORAL_CLI',
  'SKILLFLOW_TEST_WORKFLOW_BUNDLE',
];
const usesServer = new RegExp(serverVariables.join('|'));
/** `from './x'`, `import('./x')`, `require('./x')`, `require.resolve('./x')`, or a file name in quotes: 'x-process.ts'. */
const references = /(?:from\s+|import\(\s*|require(?:\.resolve)?\(\s*)['"](\.[^'"]*)['"]|['"`]([^'"`\s]+\.ts)['"`]/g;

/** Every .ts file under `dir`, fixtures included (a test may start one as a process). */
function tsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The files an import names, or that a quoted file name is the end of (it may be relative to anything). */
function referencedFiles(from, [, imported, named], files) {
  if (imported !== undefined) {
    const base = path.resolve(path.dirname(from), imported);
    const found = [base, `${base}.ts`, path.join(base, 'index.ts')].find((file) => files.has(file));
    return found ? [found] : [];
  }
  const tail = path.sep + path.normalize(named).replace(/^(\.\.?[\\/])+/, '');
  return [...files].filter((file) => file.endsWith(tail));
}

function needsServer(file, files, seen) {
  if (seen.has(file)) return false;
  seen.add(file);
  const source = fs.readFileSync(file, 'utf8');
  if (usesServer.test(source)) return true;
  return [...source.matchAll(references)].some((match) =>
    referencedFiles(file, match, files).some((target) => needsServer(target, files, seen)),
  );
}

/** The test files of each project, as absolute paths. */
function classifyTests(root) {
  const files = new Set(tsFiles(path.join(root, 'test')));
  const tests = [...files].filter(
    (file) => file.endsWith('.test.ts') && !file.includes(`${path.sep}fixtures${path.sep}`),
  );
  const integration = tests.filter((file) => needsServer(file, files, new Set()));
  return { unit: tests.filter((file) => !integration.includes(file)), integration };
}

module.exports = { classifyTests, serverVariables };
