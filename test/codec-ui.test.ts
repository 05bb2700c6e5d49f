import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumPath as chromiumPathOf } from '../scripts/chromium';
import { uiEndpointOf } from '../lib/codec/access';
import type { JsonPayload } from '../lib/codec/decode';
import { freePort, startDevServer, type DevServer } from '../lib/dev-server';
import { stopProcess } from '../lib/processes';
import { FileStore } from '../lib/store';
import { turnScope } from '../lib/store/turn-entries';
import { modelCallInputs, valueOfPayload } from './support/codec';
import { testDeps } from './support/deps';
import { startFakeAnthropic, text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { TemporalTestEnv } from './support/temporal';
import { resultOf, startTurn } from './support/turns';

/**
 * The codec as `npm start` runs it: its own process (lib/codec/main.ts) on the data dir the worker writes to, and a
 * dev server whose UI is started with `--ui-codec-endpoint` naming it. The UI's requests are made as the UI makes them:
 * from its origin, with X-Namespace and no credentials, to the endpoint its settings give the browser.
 */
const root = path.resolve(__dirname, '..');
/** Debian's chromium (`apt-get install chromium`; .ci/run installs it), headless, with nothing fetched in the background. */
const chromiumPath = chromiumPathOf();
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const uiToken = 'codec-ui-test-token-0123456789abcdefghijk';
const operatorKey = 'codec-ui-test-operator-key-0123456789';

let dataDir: string;
let codec: ChildProcess;
let codecUrl: string;
let server: DevServer;
let env: TemporalTestEnv;
let fake: FakeAnthropic;
let taskQueue: string;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-codec-ui-'));
  const [grpcPort, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  codecUrl = `http://127.0.0.1:${codecPort}`;
  codec = spawn(process.execPath, ['--import', 'tsx', 'lib/codec/main.ts'], {
    cwd: root,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      TEMPORAL_NAMESPACE: 'default',
      SKILLFLOW_DATA_DIR: dataDir,
      SKILLFLOW_API_KEYS: `${operatorKey}=ops:operator`,
      SKILLFLOW_CODEC_PORT: String(codecPort),
      SKILLFLOW_CODEC_UI_TOKEN: uiToken,
      SKILLFLOW_CODEC_UI_ORIGINS: uiUrl,
    },
  });
  await until('the codec process did not answer /healthz', async () => (await fetch(`${codecUrl}/healthz`)).ok);
  server = await startDevServer({
    cli: process.env.SKILLFLOW_TEST_TEMPORAL_CLI!,
    address: `127.0.0.1:${grpcPort}`,
    namespace: 'default',
    uiPort,
    uiCodecEndpoint: uiEndpointOf(codecUrl, uiToken),
    logFile: path.join(dataDir, 'temporal.log'),
  });
  env = await TemporalTestEnv.connect({ address: server.address });
  fake = await startFakeAnthropic();
  taskQueue = env.newTaskQueue('codec-ui');
  // The worker keeps the store where the codec process looks by default: the data dir's store folder.
  await env.startWorker(
    taskQueue,
    testDeps(fake.url, { dataDir, store: new FileStore(path.join(dataDir, 'store'), 3_600_000) }),
  );
}, 180_000);

afterAll(async () => {
  await env?.close();
  await fake?.close();
  await server?.stop();
  if (codec) await stopProcess(codec, 5_000);
});

interface UiSettings {
  Codec: { Endpoint: string; PassAccessToken: boolean; IncludeCredentials: boolean };
}

async function uiSettings(): Promise<UiSettings> {
  return (await (await fetch(`${server.uiUrl}/api/v1/settings`)).json()) as UiSettings;
}

describe('the codec beside the dev server', () => {
  it("is the codec the dev server's UI calls: its /ui/<token> endpoint, with no access token or credentials", async () => {
    expect((await uiSettings()).Codec).toMatchObject({
      Endpoint: `${codecUrl}/ui/${uiToken}`,
      PassAccessToken: false,
      IncludeCredentials: false,
    });
  });

  it("decodes a turn's model call for the UI: its origin's preflight, then the call's system prompt, tools and conversation", async () => {
    fake.enqueue({ content: [toolUse('list_skills', {})] }, { content: [text('These are the skills.')] });
    const handle = await startTurn(env.client, taskQueue, 'What skills are there?');
    expect((await resultOf(handle)).status).toBe('completed');
    const [first, second] = modelCallInputs((await handle.fetchHistory()).events);
    const endpoint = (await uiSettings()).Codec.Endpoint;
    const uiOrigin = server.uiUrl!;

    const preflight = await fetch(`${endpoint}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: uiOrigin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);

    const response = await fetch(`${endpoint}/decode`, {
      method: 'POST',
      headers: { origin: uiOrigin, 'content-type': 'application/json', 'x-namespace': 'default' },
      body: JSON.stringify({ payloads: [first, second] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    const { payloads } = (await response.json()) as { payloads: JsonPayload[] };
    expect(payloads[0]).toEqual(first);
    const whole = valueOfPayload<{ system: unknown; tools: unknown }>(first);
    const decoded = valueOfPayload<{
      promptRefs: unknown;
      resolved: { system: unknown; tools: unknown; messages: unknown[] };
    }>(payloads[1]);
    expect(decoded.promptRefs).toBeDefined();
    expect(decoded.resolved.system).toEqual(whole.system);
    expect(decoded.resolved.tools).toEqual(whole.tools);
    expect(decoded.resolved.messages).toHaveLength(3);
    expect(fake.pending).toBe(0);

    // The same endpoint without its token is refused, as is a browser on another origin.
    const bare = await fetch(`${codecUrl}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [second] }),
    });
    expect(bare.status).toBe(401);
    const elsewhere = await fetch(`${endpoint}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:1', 'access-control-request-method': 'POST' },
    });
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('shows a decoded model call in the UI itself: the activity input opens on what history holds by reference', async () => {
    if (!fs.existsSync(chromiumPath))
      throw new Error(
        `No chromium at ${chromiumPath}: npm test installs it (as root), or apt-get install chromium, or set SKILLFLOW_TEST_CHROMIUM.`,
      );
    fake.enqueue({ content: [toolUse('list_skills', {})] }, { content: [text('These are the skills.')] });
    const handle = await startTurn(env.client, taskQueue, 'List the skills, please.');
    expect((await resultOf(handle)).status).toBe('completed');
    const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
      const decodes: number[] = [];
      page.on('response', (response) => {
        if (response.url().startsWith(`${codecUrl}/ui/`)) decodes.push(response.status());
      });
      await page.goto(`${server.uiUrl}/namespaces/default/workflows/${handle.workflowId}`);
      await page.getByText('model call 2: round 2').first().click();
      const note = page.getByText('Not in workflow history: what its references name').first();
      await note.waitFor({ timeout: 30_000 });
      await note.scrollIntoViewIfNeeded();
      // The note names where it was read: this turn's scope of the store the worker wrote.
      expect(await note.textContent()).toContain(
        `${path.join(dataDir, 'store')}, scope ${turnScope(handle.workflowId)}`,
      );
      expect(decodes.length).toBeGreaterThan(0);
      expect(decodes.every((status) => status === 200)).toBe(true);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
