import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from './api';
import { testDeps, type TestDepsOptions } from './deps';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { frozenWorkflowBundle } from './frozen-bundle';
import { ApiDriver } from './scenario';
import { TemporalTestEnv } from './temporal';
import { legacyWorkflowTypes, workflowTypes } from '../../workflows/definitions';

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
  /**
   * The deploy: the old worker stops, one on the current code takes the task queue, and the API starts sessions under
   * the current type names (before it, under the legacy names, as the API of the old code did).
   */
  deploy(oldWorker: Worker, deps?: Omit<TestDepsOptions, 'dataDir'>): Promise<void>;
}

export function useHandoverStack(prefix: string): HandoverStack {
  const stack = { taskQueue: `${prefix}-${Date.now().toString(36)}` } as HandoverStack;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `skillflow-${prefix}-`));
  stack.startOldWorker = (commit) =>
    stack.env.startWorker(stack.taskQueue, testDeps(stack.fake.url, { dataDir }), undefined, {
      workflowBundlePath: frozenWorkflowBundle(commit),
    });
  let deployed = false;
  stack.deploy = async (oldWorker, deps = {}) => {
    await stack.env.stopWorker(oldWorker);
    deployed = true;
    await stack.env.startWorker(stack.taskQueue, testDeps(stack.fake.url, { dataDir, ...deps }));
  };
  beforeAll(async () => {
    stack.env = await TemporalTestEnv.connect();
    stack.fake = await startFakeAnthropic();
    const client = startingUnder(stack.env.client, () => (deployed ? workflowTypes : legacyWorkflowTypes));
    ({ app: stack.app } = await buildTestApp(client, stack.taskQueue));
    stack.api = new ApiDriver(stack.app);
  });
  afterAll(async () => {
    await stack.app?.close();
    await stack.env?.close();
    await stack.fake?.close();
  });
  return stack;
}

/**
 * The client, except that a workflow it starts by a current type name starts under the name `names()` gives that kind:
 * the API of code before the version boundary started `sessionWorkflow`, which a worker on frozen code registers.
 */
function startingUnder(client: Client, names: () => Record<keyof typeof workflowTypes, string>): Client {
  const kindOf = (type: string) =>
    (Object.keys(workflowTypes) as Array<keyof typeof workflowTypes>).find((kind) => workflowTypes[kind] === type);
  const workflow = new Proxy(client.workflow, {
    get(target, property) {
      if (property !== 'start') {
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (type: unknown, options: unknown) => {
        const kind = typeof type === 'string' ? kindOf(type) : undefined;
        return target.start((kind ? names()[kind] : type) as string, options as Parameters<typeof target.start>[1]);
      };
    },
  });
  return new Proxy(client, {
    get: (target, property) => (property === 'workflow' ? workflow : Reflect.get(target, property, target)),
  });
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
