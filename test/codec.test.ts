import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TranscriptDelta } from '../core/transcript';
import { loadConfig, type ApiKey } from '../lib/config';
import { uiEndpointOf } from '../lib/codec/access';
import { RecentConversations } from '../lib/codec/conversations';
import { decodePayloads, type CodecSources, type JsonPayload } from '../lib/codec/decode';
import { createCodecServer } from '../lib/codec/server';
import { SkillRegistry } from '../lib/skills';
import { SkillStore } from '../lib/skills/skill-store';
import { FileStore, type SharedStore } from '../lib/store';
import { turnScope } from '../lib/store/turn-entries';
import { jsonPayload, modelCallInputs, payloadsIn, valueOfPayload } from './support/codec';
import { bundledSkillsDir, testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { resultOf, startTurn } from './support/turns';

/**
 * The codec the Temporal UI calls: a real turn on the suite's Temporal server, its history fetched as the UI fetches
 * it, its payloads posted to the codec as the UI posts them; what history names by reference comes back readable.
 */
const operator: ApiKey = { key: 'codec-test-operator-key-0123456789', user: 'ops', operator: true };
const user: ApiKey = { key: 'codec-test-user-key-0123456789abcd', user: 'alice', operator: false };
const uiToken = 'codec-test-ui-token-0123456789abcdefghij';
const uiOrigin = 'http://localhost:8233';
const hour = 3_600_000;

let env: TemporalTestEnv;
let fake: FakeAnthropic;
let codec: http.Server;
let codecUrl: string;
let storeDir: string;
let dataDir: string;
let taskQueue: string;

beforeAll(async () => {
  env = await TemporalTestEnv.connect();
  fake = await startFakeAnthropic();
  storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-codec-store-'));
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-codec-data-'));
  taskQueue = env.newTaskQueue('codec');
  await env.startWorker(taskQueue, testDeps(fake.url, { dataDir, store: new FileStore(storeDir, hour) }));
  codec = createCodecServer({
    sources: {
      store: new FileStore(storeDir, hour),
      storeRetentionHours: 168,
      skills: new SkillStore(path.join(dataDir, 'skill-store')),
    },
    access: { authEnabled: true, keys: () => [operator, user], uiToken },
    namespace: 'default',
    uiOrigins: [uiOrigin],
    maxBodyBytes: 4 * 1024 * 1024,
    log: () => undefined,
  });
  await new Promise<void>((resolve) => codec.listen(0, '127.0.0.1', () => resolve()));
  codecUrl = `http://127.0.0.1:${(codec.address() as AddressInfo).port}`;
});

afterAll(async () => {
  codec?.closeAllConnections();
  await new Promise((resolve) => codec?.close(resolve));
  await env?.close();
  await fake?.close();
});

afterEach(() => expect(fake.pending).toBe(0));

interface CodecReply {
  payloads: JsonPayload[];
  error: { code: string; message: string };
}

/** The fields of decoded values these tests read. */
interface Decoded {
  [field: string]: unknown;
  delta: TranscriptDelta;
  resolved: Record<string, unknown> & { note: string };
  resume: { skills: unknown; resolved: { skills: unknown[] } };
}

async function post(
  pathname: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: CodecReply }> {
  const response = await fetch(`${codecUrl}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as CodecReply };
}

const asOperator = { authorization: `Bearer ${operator.key}` };
const valueOf = (payload: JsonPayload) => valueOfPayload<Decoded>(payload);

/** What the API received, without the cache breakpoints the worker adds on the way. */
function withoutCacheControl<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, item: unknown) => (key === 'cache_control' ? undefined : item)) as T;
}

/** Runs a turn of three model calls (two list_skills, then an answer) and returns its callModel inputs and all payloads. */
async function threeCallTurn() {
  fake.enqueue(
    { content: [toolUse('list_skills', {})] },
    { content: [text('Once more.'), toolUse('list_skills', {})] },
    { content: [text('Here are the skills.')] },
  );
  const handle = await startTurn(env.client, taskQueue, 'Which skills are there?');
  expect((await resultOf(handle)).status).toBe('completed');
  const { events } = await handle.fetchHistory();
  const modelInputs = modelCallInputs(events);
  return {
    turnId: handle.workflowId,
    modelInputs,
    all: payloadsIn(events).map(jsonPayload),
    requests: fake.requests.splice(0),
  };
}

describe('the codec, on a real turn', () => {
  it('shows the system prompt, tool definitions and conversation history names by digest, and leaves every other payload as it came', async () => {
    const { modelInputs, all, requests } = await threeCallTurn();
    expect(modelInputs).toHaveLength(3);
    const [first, second, third] = modelInputs.map(valueOf);
    // What history holds: the prompt whole once, then by digest; the conversation whole once, then as deltas.
    expect(first.system).toBeDefined();
    expect(second.system).toBeUndefined();
    expect(second.promptRefs).toEqual({ system: expect.any(String), tools: expect.any(String) });
    expect(third.delta.baseCount).toBeGreaterThan(second.delta.baseCount);
    expect(third.delta.repeated).toHaveLength(1);

    const { status, body } = await post('/decode', { payloads: all }, asOperator);
    expect(status).toBe(200);
    expect(body.payloads).toHaveLength(all.length);
    const referencing = new Set(modelInputs.slice(1).map((payload) => payload.data));
    body.payloads.forEach((decoded: JsonPayload, i: number) => {
      if (!referencing.has(all[i].data)) expect(decoded).toEqual(all[i]);
    });

    for (const [index, input] of modelInputs.entries()) {
      const decoded = body.payloads[all.findIndex((payload) => payload.data === input.data)] as JsonPayload;
      if (index === 0) {
        expect(decoded).toEqual(input);
        continue;
      }
      expect(decoded.metadata).toEqual(input.metadata);
      const value = valueOf(decoded);
      const { resolved, ...asInHistory } = value;
      expect(asInHistory).toEqual(valueOf(input));
      expect(resolved.note).toMatch(/^Not in workflow history/);
      expect(resolved.system).toEqual(first.system);
      expect(resolved.tools).toEqual(first.tools);
      // The conversation the model was sent for this call, repeated tool results filled in.
      expect(resolved.messages).toEqual(withoutCacheControl(requests[index].body.messages));
    }
  });

  it("reads each conversation record once when a turn's calls are decoded together, and shows the same", async () => {
    const { modelInputs } = await threeCallTurn();
    const reads: string[] = [];
    const store = new FileStore(storeDir, hour);
    const counting: SharedStore = {
      description: store.description,
      put: (scope, key, value, aliases) => store.put(scope, key, value, aliases),
      get: (scope, key) => (reads.push(key), store.get(scope, key)),
      sweep: () => store.sweep(),
      close: () => store.close(),
    };
    const sources = (recent?: RecentConversations): CodecSources => ({
      store: counting,
      storeRetentionHours: 168,
      skills: new SkillStore(dataDir),
      recent,
    });
    const plain = await decodePayloads(modelInputs, sources());
    const conversationReads = () => reads.filter((key) => !key.startsWith('prompt-'));
    const without = conversationReads();
    // Call 3's walk back goes through the records call 2's walk read.
    expect(new Set(without).size).toBeLessThan(without.length);
    reads.length = 0;
    expect(await decodePayloads(modelInputs, sources(new RecentConversations()))).toEqual(plain);
    const withRecent = conversationReads();
    expect(withRecent).toEqual([...new Set(without)]);
  });

  it('shows a long conversation from its latest messages, says what it left out, and shows each message whole in the call that added it', async () => {
    const rounds = 8;
    fake.enqueue(
      ...Array.from({ length: rounds - 1 }, (_, i) => ({
        content: [text(`Round ${i + 1}: ${'x'.repeat(400)}`), toolUse('list_skills', {})],
      })),
      { content: [text('Done.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'List the skills, again and again.');
    expect((await resultOf(handle)).status).toBe('completed');
    const modelInputs = modelCallInputs((await handle.fetchHistory()).events);
    const sent = fake.requests.splice(0).map((request) => withoutCacheControl(request.body.messages));
    expect(modelInputs).toHaveLength(rounds);

    // Larger than one round's messages (a list_skills result is about 9 KB), so views are cut by the budget, not only at what the call added.
    const budget = 20_000;
    const sources: CodecSources = {
      store: new FileStore(storeDir, hour),
      storeRetentionHours: 168,
      skills: new SkillStore(dataDir),
      conversationBytes: budget,
    };
    const decoded = (await decodePayloads(modelInputs, sources)).map(valueOf);
    const bytesOf = (messages: unknown[]) =>
      messages.reduce<number>((sum, message) => sum + Buffer.byteLength(JSON.stringify(message)), 0);
    // The first call's conversation is in history whole.
    const shown = new Set<string>((decoded[0].messages as unknown[]).map((message) => JSON.stringify(message)));
    for (const [index, { delta, resolved }] of decoded.entries()) {
      if (index === 0) continue;
      const whole = sent[index];
      const messages = resolved.messages as unknown[];
      const omitted = resolved.omitted as { messages: number; bytes: number; note: string } | undefined;
      const start = omitted?.messages ?? 0;
      expect(messages).toEqual(whole.slice(start));
      if (bytesOf(whole) <= budget) expect(omitted).toBeUndefined();
      else {
        expect(omitted).toEqual({
          messages: start,
          bytes: bytesOf(whole.slice(0, start)),
          note: expect.stringContaining(`"messages" begins at message ${start + 1}`),
        });
        // What the call added, and the message before it, are always shown.
        expect(start).toBeLessThanOrEqual(delta.baseCount - 1);
        // No message more was left out than needed: one more shown would have been over the budget.
        expect(bytesOf(whole.slice(start - 1))).toBeGreaterThan(budget);
        // Within the budget, or no more than what the call added and the response before it.
        expect(bytesOf(messages)).toBeLessThanOrEqual(Math.max(budget, bytesOf(whole.slice(delta.baseCount - 1))));
      }
      for (const message of messages) shown.add(JSON.stringify(message));
    }
    expect((decoded[rounds - 1].resolved.omitted as { messages: number }).messages).toBeGreaterThan(0);
    // Nothing the model was sent is out of sight: each message shows whole in some call's view.
    for (const message of sent[rounds - 1]) expect(shown.has(JSON.stringify(message))).toBe(true);
  });

  it('says inside the payload when the store no longer holds what a reference names', async () => {
    const { turnId, modelInputs } = await threeCallTurn();
    fs.rmSync(path.join(storeDir, turnScope(turnId)), { recursive: true });
    const { status, body } = await post('/decode', { payloads: modelInputs.slice(1) }, asOperator);
    expect(status).toBe(200);
    for (const decoded of body.payloads as JsonPayload[]) {
      const { resolved } = valueOf(decoded);
      for (const part of ['system', 'tools', 'messages']) {
        expect(resolved[part]).toEqual({
          unavailable: expect.stringMatching(
            /holds no .* \(expired after its retention, or never written\)\. The store keeps a turn's entries for 168 hours/,
          ),
        });
      }
    }
  });
});

describe('the codec, other payloads', () => {
  const payload = (value: unknown, encoding = 'json/plain'): JsonPayload => ({
    metadata: { encoding: Buffer.from(encoding).toString('base64') },
    data: Buffer.from(JSON.stringify(value)).toString('base64'),
  });

  it("shows a carried plan's pinned skills from the skill store, and says when a version is not there", async () => {
    const registry = new SkillRegistry({ skillsDir: bundledSkillsDir, storeDir: path.join(dataDir, 'skill-store') });
    const snapshot = await registry.snapshot('exam-mode-tuner');
    const carry = {
      version: 3,
      plan: null,
      route: null,
      skills: [
        { name: snapshot.name, hash: snapshot.hash },
        { name: 'gone', hash: 'f'.repeat(64) },
      ],
      snapshots: [],
    };
    const input = payload({ turnId: 'turn-x-2', resume: carry });
    const { body } = await post('/decode', { payloads: [input] }, asOperator);
    const { resume } = valueOf(body.payloads[0]);
    expect(resume.skills).toEqual(carry.skills);
    expect(resume.resolved.skills[0]).toEqual(snapshot);
    expect(resume.resolved.skills[1]).toEqual({
      unavailable: expect.stringContaining(`holds no version ${'f'.repeat(64)} of skill "gone"`),
    });
  });

  it('returns binary, null and malformed payloads, payloads of another namespace, and whatever /encode gets, unchanged', async () => {
    const reference = payload({ turnId: 'turn-y-1', promptRefs: { system: '0123456789abcdef' } });
    const others: JsonPayload[] = [
      { metadata: { encoding: Buffer.from('binary/null').toString('base64') } },
      {
        metadata: { encoding: Buffer.from('binary/plain').toString('base64') },
        data: Buffer.from([0, 1, 2, 255]).toString('base64'),
      },
      {
        metadata: { encoding: Buffer.from('json/plain').toString('base64') },
        data: Buffer.from('{not json').toString('base64'),
      },
      payload({ turnId: 'turn-y-1', messages: [{ role: 'user', content: 'whole' }] }),
      payload({ turnId: 'turn-y-1', promptRefs: { system: 'x' } }, 'json/protobuf'),
    ];
    expect((await post('/decode', { payloads: others }, asOperator)).body).toEqual({ payloads: others });
    expect(
      (await post('/decode', { payloads: [reference] }, { ...asOperator, 'x-namespace': 'another' })).body,
    ).toEqual({ payloads: [reference] });
    expect((await post('/encode', { payloads: [reference, ...others] }, asOperator)).body).toEqual({
      payloads: [reference, ...others],
    });
    const decoded = valueOf(
      (await post('/decode', { payloads: [reference] }, { ...asOperator, 'x-namespace': 'default' })).body.payloads[0],
    );
    expect(decoded.resolved.system).toEqual({
      unavailable: expect.stringContaining('holds no prompt part 0123456789abcdef of turn turn-y-1'),
    });
  });
});

describe('the codec, access', () => {
  const body = { payloads: [] };

  it('decodes for operators only: an operator key or the UI endpoint; no key, a wrong one or a user key is refused', async () => {
    expect(await post('/decode', body, asOperator)).toMatchObject({ status: 200, body });
    expect(await post('/some/depth/decode', body, asOperator)).toMatchObject({ status: 200, body });
    expect(await post(new URL(uiEndpointOf(codecUrl, uiToken)).pathname + '/decode', body)).toMatchObject({
      status: 200,
      body,
    });
    const refused = [
      [{}, 401, 'unauthorized'],
      [{ authorization: 'Bearer not-a-key-of-this-deployment' }, 401, 'unauthorized'],
      [{ authorization: `Bearer ${user.key}` }, 403, 'forbidden'],
    ] as const;
    for (const [headers, status, code] of refused) {
      const answer = await post('/decode', body, headers);
      expect({ status: answer.status, code: answer.body.error.code }).toEqual({ status, code });
    }
    const wrongUi = await post(`/ui/${'x'.repeat(uiToken.length)}/decode`, body);
    expect(wrongUi.status).toBe(401);
    expect((await post(`/ui/${'x'.repeat(uiToken.length)}/decode`, body, asOperator)).status).toBe(401);
  });

  it("answers the UI's CORS preflight from its origin, and no other origin's", async () => {
    const preflight = (origin: string) =>
      fetch(`${codecUrl}/ui/${uiToken}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
    const allowed = await preflight(uiOrigin);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/)).toEqual(
      expect.arrayContaining(['content-type', 'x-namespace', 'authorization']),
    );
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const answer = await post(`/ui/${uiToken}/decode`, body, { origin: uiOrigin });
    expect(answer.headers.get('access-control-allow-origin')).toBe(uiOrigin);
  });

  it('refuses what is not a codec request, with what to send instead', async () => {
    expect((await post('/decode', '{"payloads": [', asOperator)).body.error.code).toBe('invalid_json');
    expect((await post('/decode', { payloads: 'x' }, asOperator)).body.error.code).toBe('invalid_payloads');
    const large = await post('/decode', { payloads: [{ data: 'A'.repeat(4 * 1024 * 1024) }] }, asOperator);
    expect({ status: large.status, code: large.body.error.code }).toEqual({ status: 413, code: 'payload_too_large' });
    expect((await post('/elsewhere', body, asOperator)).status).toBe(404);
    const get = await fetch(`${codecUrl}/decode`, { headers: asOperator });
    expect(get.status).toBe(405);
  });
});

describe('the codec, configuration', () => {
  it('refuses to serve every conversation unauthenticated off loopback, and a UI token that cannot go into a URL path', () => {
    expect(() => loadConfig({ SKILLFLOW_AUTH: 'off', SKILLFLOW_CODEC_HOST: '0.0.0.0' })).toThrow(
      /SKILLFLOW_AUTH=off with SKILLFLOW_CODEC_HOST=0\.0\.0\.0/,
    );
    expect(
      loadConfig({
        SKILLFLOW_AUTH: 'off',
        SKILLFLOW_CODEC_HOST: '0.0.0.0',
        SKILLFLOW_UNAUTHENTICATED_NETWORK: 'allow',
        HOST: '127.0.0.1',
      }).codec.host,
    ).toBe('0.0.0.0');
    expect(() => loadConfig({ SKILLFLOW_CODEC_UI_TOKEN: 'a/b+c'.repeat(10) })).toThrow(
      /SKILLFLOW_CODEC_UI_TOKEN goes into a URL path/,
    );
    expect(loadConfig({}).codec).toMatchObject({
      host: '127.0.0.1',
      port: 8234,
      uiOrigins: ['http://localhost:8233', 'http://127.0.0.1:8233'],
    });
  });
});
