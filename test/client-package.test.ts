import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { aliceKey, buildTestApp } from './support/api';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';

const root = path.resolve(__dirname, '..');
const packageDir = path.join(root, 'packages', 'client');
const run = promisify(execFile);

/** A turn that stops at an approval checkpoint, then answers once approved. */
const checkpointTurn = (answer: string) => [
  {
    content: [
      text('Let me check.'),
      toolUse('request_human_approval', { checkpoint: 'go', summary: 'Go on?', kind: 'approval' }),
    ],
  },
  { content: [text(answer)] },
];

/** ES module user: SSE events, the checkpoint answered over HTTP, then the ended turn replayed over Node's WebSocket. */
const esmProgram = `import { SkillflowClient, SkillflowApiError } from '@skillflow/client';
const [url, apiKey] = process.argv.slice(2);
const client = new SkillflowClient({ baseUrl: url, apiKey });
const session = await client.createSession();
const turn = await client.startTurn(session.id, { message: 'Check, then answer.' });
const events = [];
for await (const event of client.followTurn(turn.id)) {
  events.push(event.type);
  if (event.type === 'checkpoint.requested') await client.answerCheckpoint(turn.id, event.checkpoint.id, { action: 'approve' });
}
const ended = await client.getTurn(turn.id);
const socket = await client.openTurnSocket(turn.id, { scope: 'read' });
const replayed = [];
for await (const event of socket.events()) replayed.push(event.type);
const missing = await client.getTurn('turn-0123456789abcdef0123-1').catch((err) => err instanceof SkillflowApiError && err.code);
console.log(JSON.stringify({ events, status: ended.status, output: ended.output, replayed, missing }));
`;

/** CommonJS user: the turn over a WebSocket made by the ws package, the checkpoint answered on the socket. */
const cjsProgram = `const { SkillflowClient } = require('@skillflow/client');
const [url, apiKey, wsPath] = process.argv.slice(2);
const client = new SkillflowClient({ baseUrl: url, apiKey, WebSocket: require(wsPath) });
async function main() {
  const session = await client.createSession({ idempotencyKey: 'package-cjs' });
  const turn = await client.startTurn(session.id, { message: 'Check, then answer.' });
  const socket = await client.openTurnSocket(turn.id);
  const events = [];
  const acks = [];
  for await (const event of socket.events()) {
    events.push(event.type);
    if (event.type === 'checkpoint.requested') acks.push(await socket.answerCheckpoint(event.checkpoint.id, { action: 'approve' }));
    if (event.type === 'done') events.push(event.output);
  }
  console.log(JSON.stringify({ events, acks, lastOffset: socket.lastOffset > 0 }));
}
main().catch((err) => { console.error(err); process.exit(1); });
`;

/** TypeScript users of either kind get the package's declarations through its exports' `types` conditions. */
const typedProgram = (from: 'import' | 'require') => `${
  from === 'import'
    ? "import { SkillflowClient, type StreamEvent, type Turn } from '@skillflow/client';"
    : "import client = require('@skillflow/client');\nconst { SkillflowClient } = client;\ntype StreamEvent = client.StreamEvent;\ntype Turn = client.Turn;"
}
export const describeEvent = (event: StreamEvent): string =>
  event.type === 'checkpoint.requested' ? event.checkpoint.summary : event.type === 'done' ? event.output : event.type;
export const status = (turn: Turn): 'completed' | 'failed' | 'cancelled' | 'running' | 'waiting' => turn.status;
export const made = new SkillflowClient({ baseUrl: 'http://127.0.0.1:3000' });
// @ts-expect-error: a turn has no such field (were the declarations lost, Turn would be any and this line no error)
export const wrong = (turn: Turn) => turn.nonsense;
`;

/**
 * The client package as an adopter gets it: `npm pack` (which builds it), the tarball installed into a new project
 * without the network, imported from ES modules and from CommonJS, each driving a turn with a checkpoint against the
 * running API, and type-checked from TypeScript in both module kinds.
 */
describe('the client package', () => {
  const harness = useWorkerHarness('client-package');
  let app: FastifyInstance;
  let url: string;
  let project: string;

  beforeAll(async () => {
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue));
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-client-package-'));
    const packed = JSON.parse(
      (await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: packageDir, encoding: 'utf8' }))
        .stdout,
    ) as Array<{ filename: string; files: Array<{ path: string }> }>;
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'adopter', private: true }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', `./${packed[0].filename}`], {
      cwd: project,
      encoding: 'utf8',
    });
  }, 180_000);
  harness.closeFirst(async () => app?.close());
  afterAll(() => project && fs.rmSync(project, { recursive: true, force: true }));

  it('installs with no dependencies, its license and both builds', () => {
    const installed = path.join(project, 'node_modules', '@skillflow', 'client');
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@skillflow/client', license: 'MIT' });
    expect(manifest.dependencies).toBeUndefined();
    expect(fs.readdirSync(path.join(project, 'node_modules'))).toEqual(['.package-lock.json', '@skillflow']);
    expect(fs.readFileSync(path.join(installed, 'LICENSE'), 'utf8')).toBe(
      fs.readFileSync(path.join(root, 'LICENSE'), 'utf8'),
    );
    for (const dir of ['esm', 'cjs'])
      expect(fs.readdirSync(path.join(installed, 'dist', dir)).sort()).toEqual(
        [
          'errors.d.ts',
          'errors.js',
          'index.d.ts',
          'index.js',
          'package.json',
          'socket.d.ts',
          'socket.js',
          'sse.d.ts',
          'sse.js',
          'types.d.ts',
        ].sort(),
      );
  });

  it('ES modules: a turn followed over SSE, its checkpoint answered, then replayed over the global WebSocket', async () => {
    fs.writeFileSync(path.join(project, 'drive.mjs'), esmProgram);
    harness.fake.enqueue(...checkpointTurn('Approved, so here it is.'));
    const { stdout } = await run(process.execPath, ['--experimental-websocket', 'drive.mjs', url, aliceKey], {
      cwd: project,
      encoding: 'utf8',
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(result).toMatchObject({ status: 'completed', output: 'Approved, so here it is.', missing: 'not_found' });
    expect(result.events).toEqual(expect.arrayContaining(['checkpoint.requested', 'checkpoint.resolved', 'done']));
    expect(result.events.at(-1)).toBe('done');
    expect(result.replayed.filter((type: string) => !type.endsWith('.delta'))).toEqual(
      result.events.filter((type: string) => !type.endsWith('.delta')),
    );
  }, 60_000);

  it('CommonJS: a turn over a WebSocket from the ws package, its checkpoint answered on the socket', async () => {
    fs.writeFileSync(path.join(project, 'drive.cjs'), cjsProgram);
    harness.fake.enqueue(...checkpointTurn('Approved over the socket.'));
    const { stdout } = await run(process.execPath, ['drive.cjs', url, aliceKey, require.resolve('ws')], {
      cwd: project,
      encoding: 'utf8',
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(result.acks).toEqual([{ checkpointId: 'cp-1', action: 'approve', by: 'alice' }]);
    expect(result.events).toEqual(expect.arrayContaining(['checkpoint.requested', 'checkpoint.resolved', 'done']));
    expect(result.events.slice(-2)).toEqual(['done', 'Approved over the socket.']);
    expect(result.lastOffset).toBe(true);
  }, 60_000);

  it('TypeScript: the declarations resolve for import (ESM) and require (CommonJS), with only the DOM library, and narrow events by type', () => {
    fs.writeFileSync(path.join(project, 'typed.mts'), typedProgram('import'));
    fs.writeFileSync(path.join(project, 'typed.cts'), typedProgram('require'));
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    const args = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
    ];
    // The browser's globals (fetch, streams, AbortSignal), as the scratch project has no @types/node.
    execFileSync(tsc, [...args, '--lib', 'es2022,dom', 'typed.mts', 'typed.cts'], { cwd: project, stdio: 'pipe' });
  }, 60_000);
});
