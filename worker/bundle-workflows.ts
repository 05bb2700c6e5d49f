import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { withoutSourcesContent } from './bundle-map';
import { withWorkflowCodeTarget } from './bundle-target';
import { workflowInterceptorModules, workflowsPath } from './create-worker';

/**
 * Run by worker/bundle-apart.ts in a child process: bundles the workflow code with the interceptor modules of a worker
 * with or without tracing (`--tracing`) and writes it to the file named by the first argument.
 */
async function main(): Promise<void> {
  const [file, ...flags] = process.argv.slice(2);
  if (!file) throw new Error('usage: bundle-workflows.ts <output file> [--tracing]');
  const quiet = { log() {}, info() {}, warn() {}, debug() {}, trace() {}, error: console.error };
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: workflowInterceptorModules(flags.includes('--tracing')),
    logger: quiet,
    webpackConfigHook: withWorkflowCodeTarget,
  });
  fs.writeFileSync(file, withoutSourcesContent(bundle.code));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
