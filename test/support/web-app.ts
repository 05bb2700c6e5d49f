import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumPath } from '../../scripts/chromium';
import { freePort } from '../../lib/dev-server';
import { createLogger, opsLogOf } from '../../lib/logging';
import { InProcessChannel } from '../../lib/live';
import { SkillRegistry } from '../../lib/skills';
import { MemoryLinkStore } from '../../api/links/store';
import { livePublisher } from '../../worker/model-deps';
import { aliceKey, buildTestApp } from './api';
import { bundledSkillsDir, testDeps } from './deps';
import { examModel, examRoundOf } from './exam-script';
import { startFakeAnthropic, text, type FakeAnthropic } from './fake-anthropic';
import { TemporalTestEnv } from './temporal';

/** Debian's chromium, headless, with nothing fetched in the background (as test/codec-ui.test.ts runs it). */
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!fs.existsSync(executablePath))
    throw new Error(
      `No chromium at ${executablePath}: npm test installs it (as root), or apt-get install chromium, or set SKILLFLOW_TEST_CHROMIUM.`,
    );
  return chromium.launch({ executablePath, args: chromiumArgs });
}

/** What the fake model answers outside an exam: markdown with HTML and a script link, which the page must show as text. */
export const hostileAnswer =
  'Noted: **a turn** outside the exam. <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> ' +
  '[a link](javascript:window.__pwned=3)';

/** The fake model: exams (examModel) for messages that carry the exam marker, `hostileAnswer` for anything else. */
function webAppModel() {
  const exam = examModel();
  return (body: Parameters<typeof exam>[0], request: Parameters<typeof exam>[1]) =>
    examRoundOf(body) ? exam(body, request) : { content: [text(hostileAnswer)] };
}

/**
 * The real API on a real port, with a worker on the suite's Temporal and the fake model: what the page talks to. The
 * API listens on one port for its whole life, so `restartApi` (close, build again, listen again) keeps the page's
 * origin, as a restarted deployment does.
 */
export class WebAppStack {
  app!: FastifyInstance;
  readonly live = new InProcessChannel();
  /** Moves the API's clock (answer links and their tokens) ahead of the real one. */
  skewMs = 0;
  readonly now = () => Date.now() + this.skewMs;
  /** Every line the API logged (pino's JSON lines, as written), across restarts, at its loudest: debug, requests too. */
  readonly apiLog: string[] = [];
  private readonly streams = new Set<Socket>();
  /** Kept across API restarts, as a deployment keeps its secret and its links (Redis) across them. */
  private readonly links = new MemoryLinkStore(this.now);
  private readonly secret = randomBytes(32);
  private constructor(
    readonly env: TemporalTestEnv,
    readonly fake: FakeAnthropic,
    readonly taskQueue: string,
    readonly port: number,
    private readonly skills: SkillRegistry,
  ) {}

  static async start(): Promise<WebAppStack> {
    const env = await TemporalTestEnv.connect();
    const fake = await startFakeAnthropic();
    fake.respond(webAppModel());
    const taskQueue = env.newTaskQueue('web-app');
    const skills = new SkillRegistry({
      skillsDir: bundledSkillsDir,
      storeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sf-web-app-')),
    });
    const stack = new WebAppStack(env, fake, taskQueue, await freePort(), skills);
    const deps = testDeps(fake.url);
    await env.startWorker(
      taskQueue,
      { ...deps, model: { ...deps.model, publishDelta: livePublisher(stack.live) } },
      (turnId, event) => stack.live.publish(turnId, event),
      { publishState: (turnId, snapshot) => stack.live.publishState(turnId, snapshot) },
    );
    await stack.startApi();
    return stack;
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private async startApi(): Promise<void> {
    const logger = createLogger('skillflow-api', 'debug', { write: (line: string) => void this.apiLog.push(line) });
    ({ app: this.app } = await buildTestApp(
      this.env.client,
      this.taskQueue,
      { SKILLFLOW_LOG_REQUESTS: '1' },
      {
        live: this.live,
        skills: this.skills,
        links: this.links,
        streamTokenSecret: this.secret,
        now: this.now,
        logger,
        log: opsLogOf(logger),
      },
    ));
    this.app.server.on('request', (request: IncomingMessage) => {
      if (!/^\/v1\/turns\/[^/]+\/events(\?|$)/.test(request.url ?? '')) return;
      const socket = request.socket;
      this.streams.add(socket);
      socket.once('close', () => this.streams.delete(socket));
    });
    await this.app.listen({ port: this.port, host: '127.0.0.1' });
  }

  /**
   * Cuts the connections that carry a turn's event stream (SSE) while the API keeps listening: what a dropped network
   * looks like from the page. Returns how many it cut.
   */
  dropStreams(): number {
    const cut = this.streams.size;
    for (const socket of this.streams) socket.destroy();
    this.streams.clear();
    return cut;
  }

  async restartApi(): Promise<void> {
    await this.app.close();
    await this.startApi();
  }

  async request<T>(method: string, url: string, body?: unknown, key = aliceKey): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** The offsets of the turn's durable log, as the API has it. */
  async logOffsets(turnId: string, key = aliceKey): Promise<number[]> {
    const { body } = await this.request<{ events: Array<{ offset: number }> }>(
      'GET',
      `/v1/turns/${turnId}/log`,
      undefined,
      key,
    );
    return body.events.map((event) => event.offset);
  }

  async close(): Promise<void> {
    await this.app?.close();
    await this.env.close();
    await this.fake.close();
    await this.live.close();
  }
}

/** The offsets of the durable events the page holds for a turn (its event list). */
export async function pageOffsets(page: Page, turnId: string): Promise<number[]> {
  return page
    .locator(`[data-turn="${turnId}"] [data-event-offset]`)
    .evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-event-offset'))));
}

/** Screenshots a person can look at: in a temp dir during tests (SKILLFLOW_WEB_SCREENSHOTS to keep them elsewhere). */
export function screenshotDir(): string {
  const dir = process.env.SKILLFLOW_WEB_SCREENSHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sf-web-shots-'));
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
