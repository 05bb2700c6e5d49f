import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileStore, PostgresStore, RedisStore, type SharedStore } from '../lib/store';
import { testDeps } from './support/deps';
import { examMessage, examModel, examModelCalls } from './support/exam-script';
import { startFakeAnthropic, type FakeAnthropic } from './support/fake-anthropic';
import { createTestDatabase, requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';
import { TemporalTestEnv } from './support/temporal';
import { transcriptFigures, type TranscriptFigures } from './support/transcript-figures';
import { answerExam, startTurn } from './support/turns';

const questions = 8;
const hour = 3_600_000;

/**
 * Workers are interchangeable: with three of them on one task queue sharing a store, an 8-question exam's model calls
 * spread over them, none misses its conversation, and the turn's history per round is that of one worker (within 10%).
 * (Before the shared store, the same exam on three workers missed 15-16 of its 22 rounds and its history per round
 * grew 2.5 times.)
 */
describe('several workers on one task queue', () => {
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let database: { url: string; drop(): Promise<void> };
  const stores: SharedStore[] = [];

  beforeAll(async () => {
    await requireRedis();
    env = await TemporalTestEnv.connect();
    fake = await startFakeAnthropic();
    fake.respond(examModel());
    database = await createTestDatabase('workers');
  });
  afterAll(async () => {
    await env?.close();
    await fake?.close();
    for (const store of stores) await store.close();
    await database?.drop();
  });

  /** Starts `count` workers on a new task queue, all with the given store, each with an identity of its own. */
  async function workersOn(count: number, store: SharedStore | undefined): Promise<string> {
    const taskQueue = env.newTaskQueue('workers');
    if (store) stores.push(store);
    for (let i = 1; i <= count; i++) {
      // No eager activities: with them every model call runs on the worker that ran the workflow task before it (the
      // dev server enables eager dispatch), and no call would ever reach another worker's store path.
      const overrides = { identity: `worker-${i}`, maxEagerActivityReservationsPerWorkflowTask: 0 };
      await env.startWorker(taskQueue, testDeps(fake.url, { store }), undefined, { overrides, ownConnection: true });
    }
    return taskQueue;
  }

  async function runExam(taskQueue: string): Promise<TranscriptFigures> {
    const handle = await startTurn(env.client, taskQueue, examMessage(questions));
    const answered = (await answerExam(handle)).length;
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Great work: the exam is done.' });
    expect(answered).toBe(questions + 2);
    return transcriptFigures(env.client, handle.workflowId);
  }

  let oneWorker: TranscriptFigures;

  it('one worker: the baseline, every call after the first carries only what is new', async () => {
    oneWorker = await runExam(await workersOn(1, undefined));
    expect(oneWorker).toMatchObject({ modelCalls: examModelCalls(questions), wholeConversations: 1, misses: 0 });
  });

  const shared: Array<[string, () => SharedStore]> = [
    ['files in a shared folder', () => new FileStore(fs.mkdtempSync(path.join(os.tmpdir(), 'sf-workers-')), hour)],
    ['Redis', () => new RedisStore(testRedisUrl(), uniqueRedisPrefix('workers'), hour)],
    ['PostgreSQL', () => new PostgresStore(database.url, 'default', hour)],
  ];

  it.each(shared)(
    'three workers sharing %s: calls spread over them, no transcript miss, the same history per round',
    async (_name, store) => {
      const figures = await runExam(await workersOn(3, store()));
      expect(figures).toMatchObject({ modelCalls: examModelCalls(questions), wholeConversations: 1, misses: 0 });
      expect(Object.keys(figures.workers).length).toBeGreaterThanOrEqual(2);
      expect(figures.bytesPerRound).toBeLessThanOrEqual(oneWorker.bytesPerRound * 1.1);
    },
  );
});
