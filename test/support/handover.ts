import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from './api';
import { testDeps, type TestDepsOptions } from './deps';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { frozenWorkflowBundle } from './frozen-bundle';
import { ApiDriver } from './scenario';
import { TemporalTestEnv } from './temporal';

/**
 * What a handover test needs: one task queue served first by a worker on a commit's frozen workflow code, then by one
 * on the current code (a deploy), with the API and the fake model in front. Filled in by the describe's beforeAll.
 */
export interface HandoverStack {
  env: TemporalTestEnv;
  fake: FakeAnthropic;
  app: FastifyInstance;
  api: ApiDriver;
  taskQueue: string;
  /** A worker running the workflow code frozen at `commit` (test/fixtures/bundles). */
  startOldWorker(commit: string): Promise<Worker>;
  /** The deploy: the old worker stops, one on the current code takes the task queue. */
  deploy(oldWorker: Worker, deps?: Omit<TestDepsOptions, 'dataDir'>): Promise<void>;
}

export function useHandoverStack(prefix: string): HandoverStack {
  const stack = { taskQueue: `${prefix}-${Date.now().toString(36)}` } as HandoverStack;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `skillflow-${prefix}-`));
  stack.startOldWorker = (commit) =>
    stack.env.startWorker(stack.taskQueue, testDeps(stack.fake.url, { dataDir }), undefined, {
      workflowBundlePath: frozenWorkflowBundle(commit),
    });
  stack.deploy = async (oldWorker, deps = {}) => {
    await stack.env.stopWorker(oldWorker);
    await stack.env.startWorker(stack.taskQueue, testDeps(stack.fake.url, { dataDir, ...deps }));
  };
  beforeAll(async () => {
    stack.env = await TemporalTestEnv.connect();
    stack.fake = await startFakeAnthropic();
    ({ app: stack.app } = await buildTestApp(stack.env.client, stack.taskQueue));
    stack.api = new ApiDriver(stack.app);
  });
  afterAll(async () => {
    await stack.app?.close();
    await stack.env?.close();
    await stack.fake?.close();
  });
  return stack;
}

/** The `patched()` ids a workflow recorded, in the order of its history. */
export async function patchesIn(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    return data ? [(JSON.parse(new TextDecoder().decode(data)) as { id: string }).id] : [];
  });
}
