import fs from 'node:fs';
import fsPromises from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createModelActivities } from '../activities/model';
import type { ChatMessage } from '../core/messages';
import type { ModelResponse } from '../core/model';
import { digestOf, replyMessageOf, transcriptMissType } from '../core/transcript';
import { loadConfig } from '../lib/config';
import {
  createSharedStore,
  FileStore,
  PostgresStore,
  RedisStore,
  SharedStoreError,
  type SharedStore,
} from '../lib/store';
import { readConversation, TurnEntryError, turnScope, type ConversationRecord } from '../lib/store/turn-entries';
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
  [
    'PostgreSQL',
    (retentionMs) => new PostgresStore(database.url, `ns-${Math.random().toString(36).slice(2)}`, retentionMs),
  ],
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

  it('gives back the value under each of its aliases', async () => {
    const store = open();
    await store.put('transcript.turn-e-1', '4-b', 'record', ['3-a']);
    await store.put('transcript.turn-e-1', '5-c', 'later record', ['4-d', '2-e']);
    expect(await store.get('transcript.turn-e-1', '4-b')).toBe('record');
    expect(await store.get('transcript.turn-e-1', '3-a')).toBe('record');
    expect(await store.get('transcript.turn-e-1', '5-c')).toBe('later record');
    expect(await store.get('transcript.turn-e-1', '4-d')).toBe('later record');
    expect(await store.get('transcript.turn-e-1', '2-e')).toBe('later record');
  });

  it("is shared: what one worker's store writes, another worker's store reads", async () => {
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
    for (const entry of [store.dir, ...folders, ...files])
      expect({ entry, mode: fs.statSync(entry).mode & 0o077 }).toEqual({ entry, mode: 0 });
    expect(files).toHaveLength(1);
  });
});

describe('the file store writes one file a put, aliases included', () => {
  const entriesOf = (store: FileStore) => {
    const [folder] = fs.readdirSync(store.dir).map((name) => path.join(store.dir, name));
    return fs.readdirSync(folder).map((name) => ({ name, ino: fs.statSync(path.join(folder, name)).ino }));
  };

  it("links the aliases to the entry's file: one file, three names, no temporary left", async () => {
    const store = new FileStore(tempDir(), hour);
    await store.put('transcript.turn-f-1', '5-c', 'v', ['3-a', '4-b']);
    const entries = entriesOf(store);
    expect(entries.map((entry) => entry.name).sort()).toEqual(['3-a', '4-b', '5-c']);
    expect(new Set(entries.map((entry) => entry.ino)).size).toBe(1);
  });

  it('writes an alias as a file of its own where the file system refuses hard links', async () => {
    const store = new FileStore(tempDir(), hour);
    const refused = jest
      .spyOn(fsPromises, 'link')
      .mockRejectedValue(Object.assign(new Error('operation not permitted'), { code: 'EPERM' }));
    try {
      await store.put('transcript.turn-f-2', '5-c', 'v', ['3-a']);
      expect(refused).toHaveBeenCalledTimes(1);
    } finally {
      refused.mockRestore();
    }
    expect(await store.get('transcript.turn-f-2', '3-a')).toBe('v');
    const entries = entriesOf(store);
    expect(entries.map((entry) => entry.name).sort()).toEqual(['3-a', '5-c']);
    expect(new Set(entries.map((entry) => entry.ino)).size).toBe(2);
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
    expect(() => loadConfig({ SKILLFLOW_STORE_URL: 'mysql://db/x' })).toThrow(
      /SKILLFLOW_STORE_URL="mysql:\/\/db\/x" must be a redis:\/\/, postgres:\/\/ or file/,
    );
    expect(() =>
      loadConfig({ SKILLFLOW_STORE_URL: 'postgres://u:hunter2@db/x', SKILLFLOW_STORE_RETENTION_HOURS: '0' }),
    ).toThrow(/SKILLFLOW_STORE_RETENTION_HOURS/);
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
    createModelActivities({ apiKey: 'k', baseURL: fake.url, model: 'm', maxTokens: 100, timeoutMs: 5_000, store })
      .callModel;

  it('a call that carries only what is new runs on a worker that never saw the turn, for as many rounds as it takes', async () => {
    const store = new FileStore(tempDir(), hour);
    const workers = [worker(store), worker(store), worker(store)];
    let conversation: ChatMessage[] = [{ role: 'user', content: 'round 0' }];
    fake.enqueue(...Array.from({ length: 6 }, (_, i) => ({ content: [text(`answer ${i}`)] })));
    await quiet().run(workers[0], { turnId: 'turn-shared-1', system: [], messages: conversation });
    for (let round = 1; round < 6; round++) {
      const append: ChatMessage[] = [
        { role: 'assistant', content: `answer ${round - 1}` },
        { role: 'user', content: `round ${round}` },
      ];
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

  it('writes the store once a call, one file under the names of the conversation with and without the response; another worker rebuilds either', async () => {
    const files = new FileStore(tempDir(), hour);
    const puts: string[] = [];
    const counting: SharedStore = {
      description: files.description,
      put: (scope, key, value, aliases) => (puts.push(key), files.put(scope, key, value, aliases)),
      get: (scope, key) => files.get(scope, key),
      sweep: () => files.sweep(),
      close: () => files.close(),
    };
    const turnId = 'turn-one-write-1';
    const system = [{ type: 'text' as const, text: 'You ask questions.' }];
    // After the first call, the system prompt and the (no) tools go by digest, as the turn sends them.
    const promptRefs = { system: digestOf(system), tools: digestOf([]) };
    const here = worker(counting);
    let conversation: ChatMessage[] = [{ role: 'user', content: 'round 0' }];
    fake.requests.length = 0;
    fake.enqueue(...Array.from({ length: 6 }, (_, i) => ({ content: [text(`answer ${i}`)] })));
    let delta: { baseCount: number; baseDigest: string; append: ChatMessage[] } | undefined;
    for (let round = 0; round < 4; round++) {
      const request = delta ? { turnId, promptRefs, delta } : { turnId, system, messages: conversation };
      const response = (await quiet().run(here, request)) as ModelResponse;
      const sent = delta ? [...conversation, ...delta.append] : conversation;
      // The loop appends the response as it came (JSON, as it crossed Temporal), then the next question.
      conversation = [...sent, replyMessageOf(JSON.parse(JSON.stringify(response.content)))];
      delta = {
        baseCount: conversation.length,
        baseDigest: digestOf(conversation),
        append: [{ role: 'user', content: [{ type: 'text', text: `round ${round + 1}` }] }],
      };
    }
    // The prompt parts the first call sent whole, then one write a call.
    expect(puts.filter((key) => key.startsWith('prompt-'))).toEqual([
      `prompt-${promptRefs.system}`,
      `prompt-${promptRefs.tools}`,
    ]);
    expect(puts.filter((key) => !key.startsWith('prompt-'))).toHaveLength(4);
    const folder = path.join(files.dir, turnScope(turnId));
    const conversationFiles = fs.readdirSync(folder).filter((name) => !name.startsWith('prompt-'));
    const inodes = new Set(conversationFiles.map((name) => fs.statSync(path.join(folder, name)).ino));
    expect({ names: conversationFiles.length, files: inodes.size }).toEqual({ names: 8, files: 4 });

    // On a worker that never saw the turn: the next call after the response (the loop appended it), and one that names
    // the conversation without it (as after a truncated response: the loop appends what it kept and asks to continue).
    const withoutReply = conversation.slice(0, -1);
    const continued: ChatMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'continue' }] }];
    await quiet().run(worker(counting), { turnId, promptRefs, delta });
    await quiet().run(worker(counting), {
      turnId,
      promptRefs,
      delta: { baseCount: withoutReply.length, baseDigest: digestOf(withoutReply), append: continued },
    });
    const [afterReply, afterTruncation] = fake.requests
      .slice(-2)
      .map((request) => withoutCacheControl(request.body.messages));
    expect(afterReply).toEqual(JSON.parse(JSON.stringify([...conversation, ...delta!.append])));
    expect(afterTruncation).toEqual(JSON.parse(JSON.stringify([...withoutReply, ...continued])));
    expect(fake.requests).toHaveLength(6);
  });

  it('without a store, or when the store lost the conversation, the call is a TranscriptMiss and the turn sends it whole', async () => {
    fake.requests.length = 0;
    const first: ChatMessage[] = [{ role: 'user', content: 'one' }];
    const delta = {
      baseCount: 1,
      baseDigest: digestOf(first),
      append: [
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'two' },
      ] as ChatMessage[],
    };
    fake.enqueue({ content: [text('a')] });
    const store = new FileStore(tempDir(), hour);
    await quiet().run(worker(store), { turnId: 'turn-lost-1', system: [], messages: first });
    await expect(quiet().run(worker(), { turnId: 'turn-lost-1', system: [], delta })).rejects.toMatchObject({
      type: transcriptMissType,
      nonRetryable: true,
    });
    fs.rmSync(store.dir, { recursive: true });
    await expect(quiet().run(worker(store), { turnId: 'turn-lost-1', system: [], delta })).rejects.toMatchObject({
      type: transcriptMissType,
    });
    const down = new RedisStore('redis://127.0.0.1:1', 'x:', hour);
    await expect(quiet().run(worker(down), { turnId: 'turn-lost-1', system: [], delta })).rejects.toThrow(
      /shared store cannot be read/,
    );
    await down.close();
    expect(fake.requests).toHaveLength(1);
  });
});

/** The messages as the test wrote them: without the cache breakpoints the worker adds to the request. */
function withoutCacheControl(messages: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(messages)) as Array<{ content: unknown }>;
  for (const message of copy)
    if (Array.isArray(message.content)) for (const block of message.content) delete block.cache_control;
  return copy;
}

describe('conversation records in the store', () => {
  const key = (messages: ChatMessage[]) => ({ count: messages.length, digest: digestOf(messages) });
  const entry = (messages: ChatMessage[]) => `${messages.length}-${digestOf(messages)}`;
  const put = (
    store: SharedStore,
    turnId: string,
    messages: ChatMessage[],
    record: ConversationRecord,
    aliases: ChatMessage[][] = [],
  ) => store.put(turnScope(turnId), entry(messages), JSON.stringify(record), aliases.map(entry));
  const m: ChatMessage[] = [
    { role: 'user', content: 'one' },
    { role: 'assistant', content: 'a' },
    { role: 'user', content: 'two' },
    { role: 'assistant', content: 'b' },
  ];

  it('a record serves the conversation it names and any shorter one down to its base', async () => {
    const store = new FileStore(tempDir(), hour);
    await put(store, 'turn-r-1', m.slice(0, 2), { base: null, append: m.slice(0, 2) }, [m.slice(0, 1)]);
    await put(store, 'turn-r-1', m, { base: key(m.slice(0, 2)), append: m.slice(2) }, [m.slice(0, 3)]);
    for (const count of [1, 2, 3, 4])
      expect(await readConversation(store, 'turn-r-1', key(m.slice(0, count)))).toEqual(m.slice(0, count));
  });

  it("reads the two records a call that workers of earlier code wrote (the call's, then its response's)", async () => {
    const store = new FileStore(tempDir(), hour);
    await put(store, 'turn-r-2', m.slice(0, 1), { base: null, append: m.slice(0, 1) });
    await put(store, 'turn-r-2', m.slice(0, 2), { base: key(m.slice(0, 1)), append: m.slice(1, 2) });
    await put(store, 'turn-r-2', m.slice(0, 3), { base: key(m.slice(0, 2)), append: m.slice(2, 3) });
    await put(store, 'turn-r-2', m, { base: key(m.slice(0, 3)), append: m.slice(3) });
    for (const count of [1, 2, 3, 4])
      expect(await readConversation(store, 'turn-r-2', key(m.slice(0, count)))).toEqual(m.slice(0, count));
  });

  it('refuses a record shorter than the conversation it is stored for, or one that does not lead back', async () => {
    const store = new FileStore(tempDir(), hour);
    await put(store, 'turn-r-3', m, { base: key(m.slice(0, 2)), append: m.slice(2, 3) });
    await put(store, 'turn-r-3', m.slice(0, 2), { base: key(m), append: [] });
    for (const count of [4, 2]) {
      const read = readConversation(store, 'turn-r-3', key(m.slice(0, count)));
      await expect(read).rejects.toBeInstanceOf(TurnEntryError);
      await expect(read).rejects.toMatchObject({ problem: 'inconsistent' });
    }
  });
});
