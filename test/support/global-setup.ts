import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { freePort, startDevServer, type DevServer } from '../../lib/dev-server';
import { obtainTemporalCli, userCacheDir } from '../../lib/temporal-cli';
import { withWorkflowCodeTarget } from '../../worker/bundle-target';
import { workflowInterceptorModules, workflowsPath } from '../../worker/create-worker';

/** History length at which the test server suggests continue-as-new. */
export const sessionContinueAsNewEvents = 60;

declare global {
  var skillflowDevServer: DevServer | undefined;
  var skillflowTestDir: string | undefined;
}

/** One in-memory Temporal dev server and one workflow bundle for the whole run; tests read both from the env. */
export default async function globalSetup(): Promise<void> {
  if (process.env.SKILLFLOW_TEST_NO_TEMPORAL === '1') return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-test-'));
  globalThis.skillflowTestDir = dir;
  const cli = await obtainTemporalCli(userCacheDir(), (line) => console.log(line));
  const address = `127.0.0.1:${await freePort()}`;
  globalThis.skillflowDevServer = await startDevServer({
    cli: cli.path,
    address,
    namespace: 'default',
    logFile: path.join(dir, 'temporal.log'),
    // Sessions continue-as-new when Temporal suggests it: make that happen within a few turns, so tests exercise it.
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': sessionContinueAsNewEvents },
  });
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: workflowInterceptorModules(false),
    logger: { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} },
    webpackConfigHook: withWorkflowCodeTarget,
  });
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, bundle.code);
  process.env.SKILLFLOW_TEST_TEMPORAL_ADDRESS = address;
  process.env.SKILLFLOW_TEST_TEMPORAL_CLI = cli.path;
  process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE = bundlePath;
}
