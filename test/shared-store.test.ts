import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createModelActivities } from '../activities/model';
import type { ChatMessage } from '../core/messages';
import { digestOf, transcriptMissType } from '../core/transcript';
import { loadConfig } from '../lib/config';
import { createSharedStore, FileStore, PostgresStore, RedisStore, SharedStoreError, type SharedStore } from '../lib/store';
import { eventually } from './support/api';
import { startFakeAnthropic, text, type FakeAnthropic } from './support/fake-anthropic';
import { createTestDatabase, requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';

/** Every backend of the shared store behaves the same: the same table of checks runs on files, Redis and PostgreSQL. */
const hour = 3_600_000;
let database: { url: string; drop(): Promise<void> };
const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sf-store-'));

beforeAll(async () => {
  await requireRedis();
  database = await createTestDatabase('store');
});
afterAll(async () => {
  await database?.drop();
});

const backends: Array<[string, (retentionMs: number) => SharedStore]> = [
  ['files', (retentionMs) => new FileStore(tempDir(), retentionMs)],
  ['Redis', (retentionMs) => new RedisStore(testRedisUrl(), uniqueRedisPrefix('store'), retentionMs)],
  ['PostgreSQL', (retentionMs) => new PostgresStore(database.url, `ns-${Math.random().toString(36).slice(2)}`, retentionMs)],
];

describe.each(backends)('the shared store on %s', (_name, make) => {
  const opened: SharedStore[] = [];
  const open = (retentionMs = hour) => {
    const store = make(retentionMs);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('gives back what was put, per scope; a second put of a key is harmless; unknown keys are undefined', async () => {
    const store = open();
    await store.put('transcript.turn-a-1', '3-abc', '{"x":1}');
    await store.put('transcript.turn-a-1', '3-abc', '{"x":1}');
    await store.put('transcript.turn-b-1', '3-abc', '{"x":2}');
    await store.put('odd scope/with:chars', 'key with spaces', 'ünïcödé \u0000 text');
    expect(await store.get('transcript.turn-a-1', '3-abc')).toBe('{"x":1}');
    expect(await store.get('transcript.turn-b-1', '3-abc')).toBe('{"x":2}');
    expect(await store.get('odd scope/with:chars', 'key with spaces')).toBe('ünïcödé \u0000 text');
    expect(await store.get('transcript.turn-a-1', 'nothing')).toBeUndefined();
    expect(await store.get('never-written', '3-abc')).toBeUndefined();
  });

  it('is shared: what one worker\'s store writes, another worker\'s store reads', async () => {
    const a = open();
    const b = a instanceof FileStore ? new FileStore(a.dir, hour) : a;
    await a.put('transcript.turn-c-1', '1-x', 'from a');
    expect(await b.get('transcript.turn-c-1', '1-x')).toBe('from a');
  });

  it('removes a scope whole once it has been idle for the retention, and keeps one still written to', async () => {
    const store = open(1_000);
    await store.put('idle', 'k1', 'v1');
    await store.put('idle', 'k2', 'v2');
    await eventually(
      async () => {
        await store.put('busy', 'k', 'v');
        await store.sweep();
        return [await store.get('idle', 'k1'), await store.get('idle', 'k2')];
      },
      (values) => values.every((value) => value === undefined),
      10_000,
    );
    expect(await store.get('busy', 'k')).toBe('v');
  });
});

describe('the file store keeps conversations private', () => {
  it('writes entries 0600 in folders 0700, whatever the umask allows', async () => {
    const dir = tempDir();
    const store = new FileStore(path.join(dir, 'store'), hour);
    const umask = process.umask(0o002);
    try {
      await store.put('transcript.turn-p-1', '1-x', 'a conversation');
    } finally {
      process.umask(umask);
    }
    const folders = fs.readdirSync(store.dir).map((name) => path.join(store.dir, name));
    const files = folders.flatMap((folder) => fs.readdirSync(folder).map((name) => path.join(folder, name)));
    for (const entry of [store.dir, ...folders, ...files]) expect({ entry, mode: fs.statSync(entry).mode & 0o077 }).toEqual({ entry, mode: 0 });
    expect(files).toHaveLength(1);
  });
});

describe('the shared store when its service is down', () => {
  it('Redis: commands fail at once with a SharedStoreError, and close returns at once', async () => {
    const store = new RedisStore('redis://127.0.0.1:1', 'x:', hour);
    const started = Date.now();
    await expect(store.put('s', 'k', 'v')).rejects.toBeInstanceOf(SharedStoreError);
    await expect(store.get('s', 'k')).rejects.toBeInstanceOf(SharedStoreError);
    await store.close();
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('PostgreSQL: commands fail with a SharedStoreError within the timeout, and close returns', async () => {
    const store = new PostgresStore('postgres://postgres@127.0.0.1:1/none', 'ns', hour, 1_000);
    await expect(store.get('s', 'k')).rejects.toBeInstanceOf(SharedStoreError);
    await expect(store.put('s', 'k', 'v')).rejects.toThrow(/PostgreSQL store unavailable/);
    await store.close();
  });
});

describe('choosing the store from the configuration', () => {
  it('files in the data dir by default; Redis, PostgreSQL or a folder from SKILLFLOW_STORE_URL; bad URLs refused', async () => {
    const stores = [
      createSharedStore(loadConfig({ SKILLFLOW_DATA_DIR: '/srv/sf' })),
      createSharedStore(loadConfig({ SKILLFLOW_STORE_URL: 'redis://127.0.0.1:6379/2', TEMPORAL_NAMESPACE: 'prod' })),
      createSharedStore(loadConfig({ SKILLFLOW_STORE_URL: 'postgres://user:secret@db:5432/skillflow' })),
      createSharedStore(loadConfig({ SKILLFLOW_STORE_URL: 'file:///var/lib/skillflow-store' })),
    ];
    try {
      expect(stores.map((store) => store.description)).toEqual([
        'files in /srv/sf/store',
        'Redis at redis://127.0.0.1:6379/2 (keys skillflow:prod:store:*)',
        'PostgreSQL at db:5432/skillflow (namespace default)',
        'files in /var/lib/skillflow-store',
      ]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
    expect(loadConfig({}).storeRetentionHours).toBe(168);
    expect(() => loadConfig({ SKILLFLOW_STORE_URL: 'mysql://db/x' })).toThrow(/SKILLFLOW_STORE_URL="mysql:\/\/db\/x" must be a redis:\/\/, postgres:\/\/ or file/);
    expect(() => loadConfig({ SKILLFLOW_STORE_URL: 'postgres://u:hunter2@db/x', SKILLFLOW_STORE_RETENTION_HOURS: '0' })).toThrow(/SKILLFLOW_STORE_RETENTION_HOURS/);
  });
});

describe('model calls share conversations through the store', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());

  const quiet = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const worker = (store?: SharedStore) =>
    createModelActivities({ apiKey: 'k', baseURL: fake.url, model: 'm', maxTokens: 100, timeoutMs: 5_000, store }).callModel;

  it('a call that carries only what is new runs on a worker that never saw the turn, for as many rounds as it takes', async () => {
    const store = new FileStore(tempDir(), hour);
    const workers = [worker(store), worker(store), worker(store)];
    let conversation: ChatMessage[] = [{ role: 'user', content: 'round 0' }];
    fake.enqueue(...Array.from({ length: 6 }, (_, i) => ({ content: [text(`answer ${i}`)] })));
    await quiet().run(workers[0], { turnId: 'turn-shared-1', system: [], messages: conversation });
    for (let round = 1; round < 6; round++) {
      const append: ChatMessage[] = [{ role: 'assistant', content: `answer ${round - 1}` }, { role: 'user', content: `round ${round}` }];
      const delta = { baseCount: conversation.length, baseDigest: digestOf(conversation), append };
      // Rounds 1-5 go to workers 1, 2, 0, 1, 2: each holds an older conversation or none.
      await quiet().run(workers[round % 3], { turnId: 'turn-shared-1', system: [], delta });
      conversation = [...conversation, ...append];
    }
    expect(fake.requests).toHaveLength(6);
    const sent = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    expect(sent.map((message) => message.role)).toEqual(conversation.map((message) => message.role));
    expect(sent).toHaveLength(11);
  });

  it('without a store, or when the store lost the conversation, the call is a TranscriptMiss and the turn sends it whole', async () => {
    fake.requests.length = 0;
    const first: ChatMessage[] = [{ role: 'user', content: 'one' }];
    const delta = { baseCount: 1, baseDigest: digestOf(first), append: [{ role: 'assistant', content: 'a' }, { role: 'user', content: 'two' }] as ChatMessage[] };
    fake.enqueue({ content: [text('a')] });
    const store = new FileStore(tempDir(), hour);
    await quiet().run(worker(store), { turnId: 'turn-lost-1', system: [], messages: first });
    await expect(quiet().run(worker(), { turnId: 'turn-lost-1', system: [], delta })).rejects.toMatchObject({ type: transcriptMissType, nonRetryable: true });
    fs.rmSync(store.dir, { recursive: true });
    await expect(quiet().run(worker(store), { turnId: 'turn-lost-1', system: [], delta })).rejects.toMatchObject({ type: transcriptMissType });
    const down = new RedisStore('redis://127.0.0.1:1', 'x:', hour);
    await expect(quiet().run(worker(down), { turnId: 'turn-lost-1', system: [], delta })).rejects.toThrow(/shared store cannot be read/);
    await down.close();
    expect(fake.requests).toHaveLength(1);
  });
});
