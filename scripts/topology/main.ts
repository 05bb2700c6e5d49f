/**
 * `npm run test:topology`: skillflow on the production topology, faults included. Builds (once) the Temporal server
 * from its Go module, creates its schema on the machine's PostgreSQL with the compose file's schema job, starts the
 * server, registers the namespace and search attributes with the compose file's setup job, and runs two workers and
 * two API processes (the real entry points) with Redis for live events and the shared store on PostgreSQL. Against it,
 * through the public API with the scripted fake model:
 *
 *   0. an answer link made on one API process and revoked on the other is refused by both at once;
 *   1. 20 concurrent exams, each started on one API process and streamed (SSE) from the other;
 *   2. 20 more, during which one worker, then the Temporal server (restarted on the same databases), then one API
 *      process are killed with SIGKILL while exams are mid-stream and mid-checkpoint; then a new worker build (workflow
 *      code with a patch, scripts/topology/new-build.ts) is deployed by replacing the workers one at a time (SIGTERM,
 *      start the new build, wait until it polls).
 *
 * Every exam must complete, no checkpoint may be asked twice, every answer must resolve its checkpoint, at most one
 * model call may repeat per kill per exam (the deploy may repeat none), every stream must resume with Last-Event-ID
 * without gaps or duplicates, no workflow task may fail with a nondeterminism error, and exams in flight at the deploy
 * must go on on the new build (its patch marker in their histories).
 * The figures go to docs/reliability.md (TOPOLOGY_WRITE=0 skips that). Exit code 0 only when every check passed.
 */
import { randomBytes } from 'node:crypto';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort, temporalAnswers } from '../../lib/dev-server';
import { obtainTemporalCli, userCacheDir } from '../../lib/temporal-cli';
import { obtainTemporalServer, type ServerBuild } from '../../lib/temporal-server';
import { searchAttributeNames } from '../../core/search-attributes';
import { examModel, examModelCalls, examRoundOf } from '../../test/support/exam-script';
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest } from '../../test/support/fake-anthropic';
import { transcriptFigures } from '../../test/support/transcript-figures';
import { answerLinkRevocation } from './answer-links';
import { NodeProcess, repoRoot, TemporalService } from './cluster';
import { checkExam, ExamClient, type Api, type ExamRecord } from './exam-client';
import { writeReport, type Figures } from './report';
import { makeTopologyTls, type TopologyTls } from './tls';
import { deployFigures, prepareNewBuild } from './new-build';
import {
  createDatabase,
  dropDatabases,
  MissingServiceError,
  postgresParts,
  redisUrl,
  requireServices,
} from './services';

const say = (line: string) => console.log(`[topology] ${line}`);
const apiKey = `topology-${randomBytes(12).toString('hex')}`;
const databases = {
  temporal: 'skillflow_topology_temporal',
  visibility: 'skillflow_topology_visibility',
  store: 'skillflow_topology_store',
};
/** Where built binaries are cached: one root, so it can move (e.g. to a per-user cache) in one place. */
const cacheDir = userCacheDir();
const exams = Number(process.env.TOPOLOGY_EXAMS || 20);

const stages: Array<{ name: string; seconds: number }> = [];
async function stage<T>(name: string, run: () => Promise<T>): Promise<T> {
  say(`${name}...`);
  const started = Date.now();
  const result = await run();
  const seconds = (Date.now() - started) / 1000;
  stages.push({ name, seconds });
  say(`${name}: done in ${seconds.toFixed(1)} s`);
  return result;
}

function runScript(script: string, env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(logFile, 'a');
    const child = spawn('sh', [path.join(repoRoot, script)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve();
      reject(
        new Error(
          `${script} failed (exit ${code}):\n${fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n')}`,
        ),
      );
    });
  });
}

/** Polls `condition` every 200 ms until it holds; false when `timeoutMs` passed first. */
async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return true;
}

interface Cluster {
  temporal: TemporalService;
  workers: NodeProcess[];
  apis: NodeProcess[];
  apiUrls: Api[];
  fake: FakeAnthropic;
  tls: TopologyTls;
  /** Model requests whose response has not ended. */
  inFlight: () => number;
  namespace: string;
}

async function startCluster(build: ServerBuild, cli: string, runDir: string): Promise<Cluster> {
  const namespace = `skillflow-topology-${randomBytes(3).toString('hex')}`;
  const pg = postgresParts();
  const tls = await stage(
    "certificates for mutual TLS (openssl: a CA, the server, a client, another CA's client)",
    async () => makeTopologyTls(path.join(runDir, 'tls')),
  );
  const storeUrl = await stage(
    'databases: Temporal schema (deploy/temporal/setup-schema.sh) and the shared store',
    async () => {
      await dropDatabases(Object.values(databases));
      await runScript(
        'deploy/temporal/setup-schema.sh',
        {
          POSTGRES_SEEDS: pg.host,
          DB_PORT: String(pg.port),
          POSTGRES_USER: pg.user,
          SQL_PASSWORD: pg.password || 'unused-with-trust-auth',
          DBNAME: databases.temporal,
          VISIBILITY_DBNAME: databases.visibility,
          TEMPORAL_SCHEMA_DIR: build.schemaDir,
          PATH: `${build.dir}${path.delimiter}${process.env.PATH}`,
        },
        path.join(runDir, 'setup-schema.log'),
      );
      return createDatabase(databases.store);
    },
  );
  const temporal = new TemporalService(
    build,
    runDir,
    { ...pg, database: databases.temporal, visibilityDatabase: databases.visibility },
    path.join(repoRoot, 'deploy/temporal/dynamicconfig/skillflow.yaml'),
    tls,
  );
  await stage(
    'Temporal server on PostgreSQL, namespace and search attributes (deploy/temporal/setup-skillflow.sh)',
    async () => {
      await temporal.start();
      await runScript(
        'deploy/temporal/setup-skillflow.sh',
        {
          TEMPORAL_CLI: cli,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_NAMESPACE: namespace,
          ...tls.clientEnv,
          SKILLFLOW_RETENTION_DAYS: '1',
          SKILLFLOW_SEARCH_ATTRIBUTES: searchAttributeNames.join(' '),
          SETUP_RETRY_SECONDS: '1',
        },
        path.join(runDir, 'setup-skillflow.log'),
      );
    },
  );

  return stage('two workers and two API processes', async () => {
    const fake = await startFakeAnthropic();
    const open = new Set<RecordedRequest>();
    const script = examModel({ delayMs: 100 });
    fake.respond((body, request) => {
      open.add(request);
      void request.finished.then(() => open.delete(request));
      return script(body, request);
    });
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: namespace,
      ...tls.clientEnv,
      SKILLFLOW_TASK_QUEUE: 'skillflow',
      SKILLFLOW_DATA_DIR: path.join(runDir, 'data'),
      SKILLFLOW_REDIS_URL: redisUrl(),
      SKILLFLOW_STORE_URL: storeUrl,
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: 'topology-model-key',
      SKILLFLOW_MODEL: 'claude-topology',
      SKILLFLOW_API_KEYS: `${apiKey}=topology`,
      SKILLFLOW_WORKER_LOG_LEVEL: 'WARN',
      HOST: '127.0.0.1',
    };
    const workers = [1, 2].map((i) => new NodeProcess(`worker-${i}`, 'worker/main.ts', env, runDir));
    const ports = [await freePort(), await freePort()];
    const apis = [1, 2].map(
      (i) => new NodeProcess(`api-${i}`, 'api/server.ts', { ...env, PORT: String(ports[i - 1]) }, runDir),
    );
    await Promise.all([...workers, ...apis].map((process) => process.start()));
    const apiUrls = apis.map((api, i) => ({ name: api.name, url: `http://127.0.0.1:${ports[i]}` }));
    return { temporal, workers, apis, apiUrls, fake, tls, inFlight: () => open.size, namespace };
  });
}

/** Model requests of exams `from`..`to` by exam and round; how many rounds were asked more than once. */
function repeatedModelCalls(requests: RecordedRequest[], records: ExamRecord[]): Map<number, number> {
  const seen = new Map<string, number>();
  for (const request of requests) {
    const exam = examRoundOf(request.body);
    const first = request.body.messages[0] as { content: unknown };
    const n = /\(#(\d+)\)/.exec(JSON.stringify(first.content))?.[1];
    if (!exam || n === undefined) continue;
    const key = `${n}:${exam.round}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const repeats = new Map<number, number>();
  for (const record of records) {
    let count = 0;
    for (let round = 0; round < examModelCalls(record.questions); round++)
      count += Math.max(0, (seen.get(`${record.n}:${round}`) ?? 0) - 1);
    repeats.set(record.n, count);
  }
  return repeats;
}

/** Connects to the frontend as clients it must refuse; names those it answered. */
async function refusedClients(c: Cluster): Promise<{ tried: number; answered: string[] }> {
  const withCertificate = c.temporal.connection();
  const caOnly = {
    serverNameOverride: c.tls.server.serverName,
    serverRootCACertificate: fs.readFileSync(c.tls.caFile),
  };
  const attempts: Array<[string, Parameters<typeof temporalAnswers>[0]]> = [
    ['over plain TCP', c.temporal.address],
    ['with TLS and no client certificate', { address: c.temporal.address, tls: caOnly }],
    ['with a client certificate from another CA', c.temporal.connection('stranger')],
  ];
  if (!(await temporalAnswers(withCertificate)))
    throw new Error("mTLS: the frontend did not answer a client with the CA's client certificate");
  const answered: string[] = [];
  for (const [name, target] of attempts) if (await temporalAnswers(target, 5_000)) answered.push(name);
  return { tried: attempts.length, answered };
}

async function runExams(
  cluster: Cluster,
  numbers: number[],
  questions: number,
  duringRun?: (clients: ExamClient[]) => Promise<void>,
): Promise<ExamRecord[]> {
  const clients = numbers.map(
    (n) => new ExamClient(n, { apis: cluster.apiUrls, apiKey, questions, thinkMs: [300, 1500], deadlineMs: 480_000 }),
  );
  await Promise.all(clients.map((client) => client.start()));
  const following = Promise.all(clients.map((client) => client.follow()));
  if (duringRun) await duringRun(clients);
  return following;
}

async function main(): Promise<number> {
  const started = Date.now();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-topology-'));
  say(`logs and configuration in ${runDir}`);
  let cluster: Cluster | undefined;
  let passed = false;
  try {
    await stage('PostgreSQL and Redis are running', requireServices);
    const [build, cli] = await stage('Temporal server build and CLI (cached)', () =>
      Promise.all([obtainTemporalServer(cacheDir, say), obtainTemporalCli(cacheDir, say)]),
    );
    cluster = await startCluster(build, cli.path, runDir);
    const c = cluster;
    const refusals = await stage("mTLS: the frontend refuses clients without the CA's client certificate", () =>
      refusedClients(c),
    );
    const linkProblems = await stage(
      'an answer link made on one API process, revoked on the other, refused by both',
      () => answerLinkRevocation(c.apiUrls, apiKey),
    );
    const newBuild = await stage(
      'a new worker build to deploy (a copy of the tree, workflow code with a patch)',
      async () => prepareNewBuild(runDir),
    );

    const first = await stage(`${exams} concurrent exams, streams served by the other API process`, () =>
      runExams(c, range(1, exams), 3),
    );
    const problems = first.flatMap(checkExam);
    for (const client of refusals.answered) problems.push(`mTLS: the frontend answered a client ${client}`);
    problems.push(...linkProblems);
    for (const record of first) {
      if (record.streams[0] === record.startedOn)
        problems.push(`exam ${record.n}: its stream came from ${record.streams[0]}, the API that started it`);
    }

    const kills: Figures['kills'] = [];
    let deploy: Figures['deploy'];
    const requestsBefore = c.fake.requests.length;
    const second = await stage(
      `${exams} exams while a worker, the Temporal server and an API process are killed, then a new worker build is deployed`,
      () =>
        runExams(c, range(exams + 1, 2 * exams), 8, async (clients) => {
          const answered = () => clients.reduce((sum, client) => sum + client.record.answers.length, 0);
          const waiting = () =>
            clients.filter(
              (client) =>
                client.record.events.filter((e) => e.type === 'checkpoint.requested').length >
                client.record.answers.length,
            ).length;
          const midway = () => c.inFlight() >= 2 && waiting() >= 2;
          const kill = async (what: Figures['kills'][number]['what'], act: () => Promise<void>) => {
            const ready = await until(midway, 120_000);
            const at = { streaming: c.inFlight(), waiting: waiting(), answeredBefore: answered() };
            say(
              `SIGKILL ${what}: ${at.streaming} model calls streaming, ${at.waiting} exams waiting at a checkpoint${ready ? '' : ' (the run never got there: killing anyway)'}`,
            );
            await act();
            kills.push({ what, ...at });
            await until(() => answered() >= at.answeredBefore + 10, 180_000);
          };
          await kill('worker', async () => {
            await c.workers[0].kill('SIGKILL');
            await c.workers[0].start();
          });
          await kill('Temporal server', async () => {
            await c.temporal.kill('SIGKILL');
            await new Promise((resolve) => setTimeout(resolve, 2_000));
            await c.temporal.start();
          });
          await kill('API process', async () => {
            await c.apis[0].kill('SIGKILL');
            await new Promise((resolve) => setTimeout(resolve, 1_000));
            await c.apis[0].start();
          });
          // The rolling deploy: each worker in turn stops (SIGTERM: it finishes its activities within its grace) and the
          // new build starts in its place; the other worker keeps the exams going meanwhile.
          const ready = await until(midway, 120_000);
          const inFlight = clients.filter((client) => !client.record.terminal).length;
          const at = { streaming: c.inFlight(), waiting: waiting() };
          say(
            `deploying the new build, one worker at a time: ${inFlight} exams in flight, ${at.streaming} model calls streaming, ${at.waiting} exams waiting${ready ? '' : ' (the run never got there: deploying anyway)'}`,
          );
          const deployStarted = Date.now();
          for (const worker of c.workers) {
            await worker.kill('SIGTERM');
            worker.root = newBuild;
            await worker.start();
          }
          deploy = {
            ...at,
            inFlight,
            seconds: (Date.now() - deployStarted) / 1000,
            onNewBuild: 0,
            nondeterministic: 0,
          };
        }),
    );
    problems.push(...second.flatMap(checkExam));
    const repeats = repeatedModelCalls(c.fake.requests.slice(requestsBefore), second);
    for (const [n, count] of repeats)
      if (count > kills.length) problems.push(`exam ${n}: ${count} model calls repeated for ${kills.length} kills`);

    const figures = await stage('transcripts of every turn (Temporal histories)', async () => {
      const connection = await Connection.connect(c.temporal.connection());
      try {
        const client = new Client({ connection, namespace: c.namespace });
        let misses = 0;
        let whole = 0;
        for (const record of [...first, ...second]) {
          if (!record.turnId) continue;
          const turn = await transcriptFigures(client, record.turnId);
          misses += turn.misses;
          whole += turn.wholeConversations;
          if (deploy && second.includes(record)) {
            const versions = await deployFigures(client, record.turnId);
            if (versions.onNewBuild) deploy.onNewBuild++;
            deploy.nondeterministic += versions.nondeterministic;
          }
        }
        return { misses, whole };
      } finally {
        await connection.close();
      }
    });
    if (figures.misses > 0) problems.push(`${figures.misses} model calls missed their transcript`);
    if (!deploy) problems.push('the new build was never deployed');
    else {
      if (deploy.nondeterministic > 0)
        problems.push(`${deploy.nondeterministic} workflow tasks failed with a nondeterminism error after the deploy`);
      if (deploy.inFlight > 0 && deploy.onNewBuild === 0)
        problems.push(`none of the ${deploy.inFlight} exams in flight at the deploy ran on the new build`);
    }

    const result: Figures = {
      exams: {
        first: first.length,
        second: second.length,
        completed: [...first, ...second].filter((r) => r.terminal?.type === 'done').length,
      },
      kills,
      deploy,
      repeatedModelCalls: [...repeats.values()].reduce((a, b) => a + b, 0),
      examsWithRepeats: [...repeats.values()].filter((count) => count > 0).length,
      maxRepeatsPerExam: Math.max(0, ...repeats.values()),
      resumedStreams: [...first, ...second].reduce((sum, r) => sum + r.resumes, 0),
      examsResumed: [...first, ...second].filter((r) => r.resumes > 0).length,
      mtlsRefusals: { tried: refusals.tried, refused: refusals.tried - refusals.answered.length },
      checkpointsAnswered: [...first, ...second].reduce((sum, r) => sum + r.answers.length, 0),
      answersRetried: [...first, ...second].reduce((sum, r) => sum + r.answers.filter((a) => a.attempts > 1).length, 0),
      transcriptMisses: figures.misses,
      modelCalls: c.fake.requests.length,
      deltas: [...first, ...second].reduce((sum, r) => sum + r.deltas, 0),
      problems,
      stages,
      totalSeconds: (Date.now() - started) / 1000,
    };
    for (const problem of problems) say(`FAILED: ${problem}`);
    say(
      `exams completed ${result.exams.completed}/${first.length + second.length}; kills ${kills.map((k) => k.what).join(', ')}; ` +
        `deploy: ${deploy ? `${deploy.onNewBuild} of ${deploy.inFlight} exams in flight went on on the new build` : 'none'}; ` +
        `repeated model calls ${result.repeatedModelCalls} (${result.examsWithRepeats} exams, at most ${result.maxRepeatsPerExam} each); ` +
        `streams resumed ${result.resumedStreams} (${result.examsResumed} exams); transcript misses ${result.transcriptMisses}`,
    );
    if (process.env.TOPOLOGY_WRITE !== '0') say(`figures written to ${writeReport(result, commitOf())}`);
    passed = problems.length === 0;
    return passed ? 0 : 1;
  } catch (err) {
    say(
      `FAILED: ${err instanceof MissingServiceError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return 1;
  } finally {
    say('stopping the processes and the Temporal server...');
    if (cluster) {
      await Promise.all([...cluster.workers, ...cluster.apis].map((process) => process.kill('SIGKILL')));
      await cluster.temporal.kill('SIGKILL');
      await cluster.fake.close();
    }
    if (passed) {
      await dropDatabases(Object.values(databases)).catch((err: unknown) =>
        say(`could not drop the databases: ${String(err)}`),
      );
      fs.rmSync(runDir, { recursive: true, force: true });
    } else {
      say(
        `kept for a look: ${runDir} (logs) and the databases ${Object.values(databases).join(', ')} (dropped by the next run)`,
      );
    }
    say(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function commitOf(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${commit} (with uncommitted changes)` : commit;
  } catch {
    return 'unknown';
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
