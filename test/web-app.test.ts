import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { aliceKey, bobKey, operatorKey } from './support/api';
import { examMessage } from './support/exam-script';
import { hostileAnswer, launchChromium, pageOffsets, screenshotDir, WebAppStack } from './support/web-app';

/**
 * The web app (web/, served by the API at /app) in Debian's Chromium against the real API, a worker and the fake
 * model: a whole exam, the inbox, the catalog, each checked by axe-core for serious accessibility problems.
 */
const root = path.resolve(__dirname, '..');
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let stack: WebAppStack;
let browser: Browser;
let shots: string;

beforeAll(async () => {
  if (!fs.existsSync(path.join(root, 'web', 'dist', 'index.html')))
    throw new Error('web/dist has no build: npm test builds it (npm run build:web does it alone).');
  stack = await WebAppStack.start();
  browser = await launchChromium();
  shots = screenshotDir();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

interface Turn {
  id: string;
  sessionId: string;
  status: string;
  skill: string | null;
  pendingCheckpoint: { id: string; name: string } | null;
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const turnOf = async (id: string, key = aliceKey) =>
  (await stack.request<Turn>('GET', `/v1/turns/${id}`, undefined, key)).body;

async function startExam(questions: number, n: number, key = aliceKey): Promise<Turn> {
  const { body: session } = await stack.request<{ id: string }>('POST', '/v1/sessions', undefined, key);
  const { body: started } = await stack.request<Turn>(
    'POST',
    `/v1/sessions/${session.id}/turns`,
    { message: examMessage(questions, n) },
    key,
  );
  return started;
}

/** Opens the page signed in with an API key (typed into the sign-in form, as a person does). */
async function signedIn(key: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  await page.goto(`${stack.base}/app/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return page;
}

/** axe-core run in the page (evaluated, not a script tag: the CSP allows no inline script); serious and critical only. */
async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: () => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }>;
        };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${JSON.stringify(violation.nodes.map((node) => node.target))}`);
}

const checkpointForm = (page: Page, name: string) => page.locator(`form[data-checkpoint="${name}"]`);

async function expectPageHoldsLog(page: Page, turnId: string): Promise<void> {
  const log = await stack.logOffsets(turnId);
  await until(
    'the page to hold the turn log',
    () => pageOffsets(page, turnId),
    (offsets) => offsets.length >= log.length,
  );
  expect(await pageOffsets(page, turnId)).toEqual(await stack.logOffsets(turnId));
}

async function answerQuestion(page: Page, number: number): Promise<void> {
  const form = checkpointForm(page, `question_${number}`);
  await form.getByLabel('Your answer').fill(`Answer ${number}: a stack.`);
  await form.getByRole('button', { name: 'Send answer' }).click();
  await form.waitFor({ state: 'detached' });
}

interface Link {
  id: string;
  url: string;
}

async function makeLink(sessionId: string, body: Record<string, unknown> = {}, key = aliceKey): Promise<Link> {
  const { status, body: link } = await stack.request<Link>('POST', `/v1/sessions/${sessionId}/links`, body, key);
  expect(status).toBe(201);
  return link;
}

/** The API's responses that issue a token: the link's access tokens and the turns' stream tokens. */
const tokenIssuers = new Set(['/v1/links/exchange', '/v1/stream-tokens']);

/**
 * A learner's browser: a context of its own (its own sessionStorage) opening the link as sent; `issued` gathers the
 * tokens the API gives the page.
 */
async function openLink(link: Link): Promise<{ page: Page; urls: string[]; issued: Array<Promise<string | null>> }> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
  const page = await context.newPage();
  const urls: string[] = [];
  const issued: Array<Promise<string | null>> = [];
  page.on('request', (request) => urls.push(request.url()));
  page.on('response', (response) => {
    if (response.ok() && tokenIssuers.has(new URL(response.url()).pathname))
      issued.push(
        response.json().then(
          (body: { token: string }) => body.token,
          () => null,
        ),
      );
  });
  await page.goto(link.url);
  return { page, urls, issued };
}

/** The access token the page holds for its link (sessionStorage), to ask the API what the page would ask. */
const accessTokenOf = (page: Page) =>
  page.evaluate(() => {
    const storage = (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } })
      .sessionStorage;
    return (JSON.parse(storage.getItem('skillflow.credential')!) as { token: string }).token;
  });

async function asPage<T>(page: Page, method: string, url: string, body?: unknown) {
  const token = await accessTokenOf(page);
  const response = await fetch(`${stack.base}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/**
 * An exam of three questions taken in the page as a learner does: a bad modify value (the API's 400 on its field, the
 * checkpoint staying), a good one, a dropped connection while question 2 is asked, a reload before answering it, an API
 * restart while the turn goes on after it, the
 * report drawn from the artifact, the route chosen; the page's events equal the turn's log throughout.
 */
async function takeWholeExam(page: Page, turn: Turn): Promise<void> {
  const setup = checkpointForm(page, 'exam_params');
  await setup.waitFor();
  expect(await setup.getByLabel('question count').inputValue()).toBe('3');
  expect(await setup.getByLabel('difficulty').inputValue()).toBe('adaptive');
  expect(await setup.getByLabel('question count').getAttribute('max')).toBe('50');

  await setup.getByLabel('question count').fill('500');
  await setup.getByRole('button', { name: 'Approve with changes' }).click();
  const fieldError = setup.locator('[data-field="question_count"] .field-error');
  await fieldError.waitFor();
  expect(await fieldError.textContent()).toContain('above the maximum 50');
  expect(await setup.getByLabel('question count').getAttribute('aria-invalid')).toBe('true');
  expect((await turnOf(turn.id)).pendingCheckpoint).toMatchObject({ name: 'exam_params' });
  await page.screenshot({ path: path.join(shots, 'web-app-exam-params-error.png'), fullPage: true });

  await setup.getByLabel('question count').fill('3');
  await setup.getByLabel('time limit min').fill('30');
  await setup.getByLabel('Changes in your own words (optional)').fill('No essays, please.');
  await setup.getByRole('button', { name: 'Approve with changes' }).click();
  await setup.waitFor({ state: 'detached' });
  await page.locator('[data-checkpoint="exam_params"][data-outcome="resolved"]').waitFor();

  await checkpointForm(page, 'question_1').waitFor();
  expect(await page.locator('.position .count').textContent()).toBe('question 1 of 3');
  expect(await page.locator('.position [role="timer"]').textContent()).toMatch(/^(29|30):\d\d left$/);
  await answerQuestion(page, 1);

  // The network drops while the turn goes on: the page's stream is cut and it cannot reach the API until it is back.
  await page.context().setOffline(true);
  expect(stack.dropStreams()).toBeGreaterThan(0);
  await until(
    'the turn to ask question 2 while the page is offline',
    () => turnOf(turn.id),
    (read) => read.pendingCheckpoint?.name === 'question_2',
  );
  expect(await checkpointForm(page, 'question_2').count()).toBe(0);
  await page.context().setOffline(false);
  await checkpointForm(page, 'question_2').waitFor();
  await expectPageHoldsLog(page, turn.id);

  await page.reload();
  await checkpointForm(page, 'question_2').waitFor();
  expect(await page.locator('.position .count').textContent()).toBe('question 2 of 3');
  await expectPageHoldsLog(page, turn.id);
  await page.screenshot({ path: path.join(shots, 'web-app-exam.png'), fullPage: true });
  expect(await seriousAxeViolations(page)).toEqual([]);

  await answerQuestion(page, 2);
  await stack.restartApi();
  await checkpointForm(page, 'question_3').waitFor({ timeout: 30_000 });
  await expectPageHoldsLog(page, turn.id);
  await answerQuestion(page, 3);

  const routing = checkpointForm(page, 'post_exam_routing');
  await routing.waitFor();
  const report = page.locator('[data-report="exam"]');
  expect(await report.locator('.ring-value').getAttribute('data-score')).toBe('100');
  expect(await report.locator('rect.q').count()).toBe(3);
  expect(await report.locator('rect.q[data-result="correct"]').count()).toBe(3);
  expect(
    await report.locator('rect.bar').evaluateAll((bars) => bars.map((bar) => bar.getAttribute('data-concept'))),
  ).toEqual(['arrays', 'stacks']);
  expect(Number(await report.locator('rect.bar').first().getAttribute('width'))).toBeGreaterThan(300);
  await report.screenshot({ path: path.join(shots, 'web-app-report.png') });
  await routing.getByRole('button', { name: 'Stop here' }).click();
  await page.locator('[data-ending="done"]').waitFor();
  await expectPageHoldsLog(page, turn.id);
  expect(await turnOf(turn.id)).toMatchObject({ status: 'completed' });
}

describe('the web app at /app', () => {
  it('takes a whole exam through an answer link: the token leaves the address and the logs, a bad modify stays on its field, a dropped connection, a reload and an API restart lose nothing, the report is drawn', async () => {
    const turn = await startExam(3, 1);
    const link = await makeLink(turn.sessionId);
    const token = /#link=(.+)$/.exec(link.url)![1];
    const { page, urls, issued } = await openLink(link);
    await checkpointForm(page, 'exam_params').waitFor();
    expect(page.url()).toBe(`${stack.base}/app/#/session/${turn.sessionId}`);
    // The page's one entry in the history has no token: back is the blank page the browser opened with.
    await page.goBack();
    expect(page.url()).toBe('about:blank');
    await page.goForward();
    await checkpointForm(page, 'exam_params').waitFor();
    expect(await page.getByLabel('Message', { exact: true }).count()).toBe(0);

    await takeWholeExam(page, turn);

    const access = await accessTokenOf(page);
    expect(urls.filter((url) => url.includes(token) || url.includes(access))).toEqual([]);
    // No token issued in the scenario (the link's, each access token, each stream token) nor the key is in a log line.
    const tokens = (await Promise.all(issued)).filter((issuedToken) => issuedToken !== null);
    expect(tokens).toContain(access);
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const secrets = [token, aliceKey, ...tokens];
    // The log holds the page's requests, its event streams among them (the lines a token would be in).
    expect(stack.apiLog.some((line) => line.includes(`/v1/turns/${turn.id}/events`))).toBe(true);
    expect(stack.apiLog.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([]);
    const logRead = await stack.request<{ events: Array<{ type: string; by?: string }> }>(
      'GET',
      `/v1/turns/${turn.id}/log`,
    );
    expect(logRead).toMatchObject({ status: 200 });
    const log = logRead.body;
    expect(log.events.filter((event) => event.type === 'checkpoint.resolved').map((event) => event.by)).toEqual(
      Array(5).fill(`link:${link.id}`),
    );
    // The printable report page draws the same chart.
    await page.goto(`${stack.base}/app/#/report/${turn.id}`);
    await page.locator('[data-report="exam"] .ring-value[data-score="100"]').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('takes a whole exam signed in with an API key', async () => {
    const turn = await startExam(1, 3);
    const page = await signedIn(aliceKey);
    await page.goto(`${stack.base}/app/#/session/${turn.sessionId}`);
    await checkpointForm(page, 'exam_params').getByRole('button', { name: 'Approve' }).click();
    await answerQuestion(page, 1);
    const routing = checkpointForm(page, 'post_exam_routing');
    await routing.waitFor();
    expect(await page.locator('[data-report="exam"] rect.q').count()).toBe(1);
    await routing.getByRole('button', { name: 'Stop here' }).click();
    await page.locator('[data-ending="done"]').waitFor();
    await expectPageHoldsLog(page, turn.id);
    await page.close();
  }, 90_000);

  it("lets an operator answer another user's waiting turn from the inbox", async () => {
    const turn = await startExam(2, 2, bobKey);
    await until(
      "bob's exam to wait",
      () => turnOf(turn.id, bobKey),
      (read) => read.pendingCheckpoint?.name === 'exam_params',
    );
    const page = await signedIn(operatorKey);
    await page.goto(`${stack.base}/app/#/inbox`);
    const row = page.locator(`[data-inbox-turn="${turn.id}"]`);
    await until(
      'the inbox to list the turn (Temporal visibility lags a moment)',
      async () => {
        if (await row.count()) return true;
        await page.getByRole('button', { name: 'Refresh' }).click();
        return false;
      },
      (listed) => listed,
    );
    expect(await row.locator('td').nth(1).textContent()).toBe('bob');
    expect(await row.locator('td').nth(2).textContent()).toBe('exam_params');
    await page.screenshot({ path: path.join(shots, 'web-app-inbox.png'), fullPage: true });
    expect(await seriousAxeViolations(page)).toEqual([]);
    await row.getByRole('button', { name: /^Answer/ }).click();
    await checkpointForm(page, 'exam_params').getByRole('button', { name: 'Approve' }).click();
    await until(
      'the answer to reach the turn',
      () => turnOf(turn.id, bobKey),
      (read) => read.pendingCheckpoint?.name === 'question_1',
    );
    const { body: log } = await stack.request<{ events: Array<{ type: string; by?: string }> }>(
      'GET',
      `/v1/turns/${turn.id}/log`,
      undefined,
      bobKey,
    );
    expect(log.events.find((event) => event.type === 'checkpoint.resolved')).toMatchObject({ by: 'ops' });
    await stack.request('POST', `/v1/turns/${turn.id}/cancel`, undefined, bobKey);
    await page.close();
  }, 90_000);

  it('shows what the model writes as markdown and never as HTML: a message sent from a new conversation', async () => {
    const page = await signedIn(aliceKey);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForURL(/#\/session\//);
    await page.getByLabel('Message', { exact: true }).fill('Say something.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-ending="done"]').waitFor();
    const answer = page.locator('.bubble.assistant .markdown').last();
    expect(await answer.locator('strong').textContent()).toBe('a turn');
    expect(await answer.textContent()).toContain('<img src=x onerror="window.__pwned=1">');
    expect(await answer.textContent()).toContain('<script>window.__pwned=2</script>');
    expect(await answer.locator('img, script, a[href^="javascript"]').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(hostileAnswer).toContain('javascript:');
    expect(await page.getByLabel('Message', { exact: true }).isEnabled()).toBe(true);
    await page.close();
  }, 60_000);

  it("starts a typed turn from the catalog's form of the skill's parameters", async () => {
    const page = await signedIn(aliceKey);
    await page.goto(`${stack.base}/app/#/catalog`);
    const before = stack.fake.requests.length;
    const card = page.locator('[data-skill="exam-mode-tuner"]');
    await card.getByRole('button', { name: 'Start exam-mode-tuner' }).click();
    const form = card.getByRole('form', { name: 'Start exam-mode-tuner' });
    expect(await seriousAxeViolations(page)).toEqual([]);
    // The skill's required parameter left out: the API's 400 names it, and the form shows it on its field.
    await form.getByRole('button', { name: 'Start exam-mode-tuner' }).click();
    const topicError = form.locator('[data-field="topic"] .field-error');
    await topicError.waitFor();
    expect(await topicError.textContent()).toMatch(/topic/);
    await form.getByLabel('topic').fill('graphs');
    await form.getByLabel('concepts').fill('BFS, DFS');
    await form.getByRole('button', { name: 'Start exam-mode-tuner' }).click();
    await page.waitForURL(/#\/session\//);
    const sessionId = decodeURIComponent(/#\/session\/([^/?]+)/.exec(page.url())![1]);
    const { body: session } = await stack.request<{ turns: Array<{ id: string; skill: string | null }> }>(
      'GET',
      `/v1/sessions/${sessionId}`,
    );
    expect(session.turns).toEqual([expect.objectContaining({ skill: 'exam-mode-tuner' })]);
    // The model got the skill with the typed params (neither word is in the skill's own text).
    const sent = await until(
      'the typed start to reach the model',
      async () => JSON.stringify(stack.fake.requests.slice(before).map((request) => request.body.messages)),
      (seen) => seen.includes('DFS'),
    );
    expect(sent).toContain('graphs');
    await stack.request('POST', `/v1/turns/${session.turns[0].id}/cancel`);
    await page.close();
  }, 60_000);

  it('refuses a link for a checkpoint outside its pattern, for another session, after revocation and after expiry', async () => {
    const turn = await startExam(1, 4);
    const other = await startExam(1, 5);
    const link = await makeLink(turn.sessionId, { checkpoints: 'question*' });
    const { page } = await openLink(link);

    // exam_params is not a question: the page shows it without a form, and the API refuses an answer from the link.
    await page.locator('[data-checkpoint="exam_params"][data-outcome="not-for-this-link"]').waitFor();
    expect(await checkpointForm(page, 'exam_params').count()).toBe(0);
    const pending = (await turnOf(turn.id)).pendingCheckpoint!;
    const refused = await asPage<{ error: { code: string } }>(
      page,
      'POST',
      `/v1/turns/${turn.id}/checkpoints/${pending.id}`,
      { action: 'approve' },
    );
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'link_checkpoint_not_allowed' } } });
    await stack.request('POST', `/v1/turns/${turn.id}/checkpoints/${pending.id}`, { action: 'approve' });
    await answerQuestion(page, 1);

    // Another session, through the page's address and through the API.
    await page.goto(`${stack.base}/app/#/session/${other.sessionId}`);
    const wrong = page.getByRole('alert');
    await wrong.waitFor();
    expect(await wrong.textContent()).toContain('This answer link');
    expect(await asPage(page, 'GET', `/v1/sessions/${other.sessionId}`)).toMatchObject({
      status: 403,
      body: { error: { code: 'link_wrong_session' } },
    });

    // Revoked: the page signs out and says so; the API refuses the access token it held.
    const access = await accessTokenOf(page);
    expect((await stack.request('DELETE', `/v1/sessions/${turn.sessionId}/links/${link.id}`)).status).toBe(204);
    await page.goto(`${stack.base}/app/#/session/${turn.sessionId}`);
    await page.getByText('This link was revoked.').waitFor();
    const afterRevoke = await fetch(`${stack.base}/v1/sessions/${turn.sessionId}`, {
      headers: { authorization: `Bearer ${access}` },
    });
    expect(afterRevoke.status).toBe(401);
    expect(((await afterRevoke.json()) as { error: { code: string } }).error.code).toBe('link_revoked');
    await page.context().close();

    // Expired: a link of 60 s opened once the API's clock passed it.
    const short = await makeLink(turn.sessionId, { expiresInSeconds: 60 });
    stack.skewMs = 61_000;
    try {
      const late = await openLink(short);
      await late.page.getByText('This link has expired.').waitFor();
      await late.page.context().close();
    } finally {
      stack.skewMs = 0;
    }
    for (const id of [turn.id, other.id]) await stack.request('POST', `/v1/turns/${id}/cancel`);
  }, 90_000);
});
