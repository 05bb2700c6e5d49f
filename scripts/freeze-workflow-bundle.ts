import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { bundleWorkflowCode } from '@temporalio/worker';
import { withWorkflowCodeTarget } from '../worker/bundle-target';
import { workflowInterceptorModules, workflowsPath } from '../worker/create-worker';

/**
 * Freezes the workflow code of the current commit as a gzipped webpack bundle in test/fixtures/bundles/, for the
 * handover test (a worker running it starts turns that a worker with the newer code finishes). Run it with the
 * outgoing code, before changing workflow code: `npm run freeze:workflows` (docs/operators.md).
 */
const root = path.resolve(__dirname, '..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

async function main(): Promise<void> {
  if (git('status', '--porcelain', '--', 'workflows', 'core') !== '') {
    throw new Error(
      'workflows/ or core/ has uncommitted changes: commit first, so the bundle is named after the code it holds.',
    );
  }
  const commit = git('rev-parse', '--short', 'HEAD');
  const file = path.join(root, 'test', 'fixtures', 'bundles', `workflows-${commit}.js.gz`);
  if (fs.existsSync(file)) throw new Error(`${path.relative(root, file)} exists: a frozen bundle is never rebuilt.`);
  const quiet = { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} };
  // No source map: it would triple the size, and the bundle is only ever run, never debugged.
  // With the interceptor modules a production worker bundles (tracing off: it adds only spans, never commands).
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: workflowInterceptorModules(false),
    logger: quiet,
    webpackConfigHook: (config) => ({ ...withWorkflowCodeTarget(config), devtool: false }),
  });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, zlib.gzipSync(bundle.code, { level: 9 }));
  console.log(`${path.relative(root, file)}: workflow code of ${commit} (${git('log', '-1', '--format=%s', commit)})`);
  console.log('Add a line for it to test/fixtures/bundles/README.md.');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
