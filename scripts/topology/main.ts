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
 *      process are killed with SIGKILL while exams are mid-stream and mid-checkpoint; then the build is deployed
 *      across the version boundary (scripts/topology/boundary.ts): the cluster runs the commit before the boundary,
 *      and its workers, then its API processes, are replaced one at a time by the working tree (SIGTERM, start the new
 *      build, wait until it is ready), half the exams in flight holding their next answer until every worker runs the
 *      new build, so they wait at a checkpoint across the deploy and go on on it; then (TOPOLOGY_MOVE=1), with half the exams holding their answers,
 *      `skillflow legacy --move` moves the legacy turns waiting at a checkpoint across;
 *   3. a few exams on the deployed build, which must run under the new workflow types only.
 *
 * Every exam must complete, no checkpoint may be asked twice, every answer must resolve its checkpoint, at most one
 * model call may repeat per kill per exam (the deploy may repeat none), every stream must resume with Last-Event-ID
 * without gaps or duplicates, no workflow task may fail with a nondeterminism error, exams in flight at the deploy
 * must finish on the legacy types (on the new build's workers) or, moved, on the new ones, and no legacy turn or skill
 * run may be left running at the end.
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
import { boundaryChecks, prepareOldBuild, type OldBuild } from './boundary';
import { legacyCommand, type LegacyCount, type MoveOutcome } from './legacy-command';
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
/** Exams started once the deploy is over, on the new side only. */
const newSideExams = Number(process.env.TOPOLOGY_NEW_SIDE_EXAMS || 5);
/**
 * TOPOLOGY_MOVE=1 adds `skillflow legacy --move` after the deploy. Off until the current code's turn reads a moved run
 * (`{ moved }`) and the legacy turn registers its move handler (workflows/legacy/move.ts): nothing moves a turn before.
 * The report says when it ran.
 */
const moveAcross = process.env.TOPOLOGY_MOVE === '1';

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
  /** What `skillflow legacy` needs to reach Temporal as an operator would: the workers' Temporal settings. */
  operatorEnv: NodeJS.ProcessEnv;
}

async function startCluster(build: ServerBuild, cli: string, runDir: string, oldBuild: OldBuild): Promise<Cluster> {
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
    const workers = [1, 2].map((i) => new NodeProcess(`worker-${i}`, 'worker/main.ts', env, runDir, oldBuild.root));
    const ports = [await freePort(), await freePort()];
    const apis = [1, 2].map(
      (i) =>
        new NodeProcess(`api-${i}`, 'api/server.ts', { ...env, PORT: String(ports[i - 1]) }, runDir, oldBuild.root),
    );
    await Promise.all([...workers, ...apis].map((process) => process.start()));
    const apiUrls = apis.map((api, i) => ({ name: api.name, url: `http://127.0.0.1:${ports[i]}` }));
    const operatorEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: namespace,
      ...tls.clientEnv,
      SKILLFLOW_TASK_QUEUE: env.SKILLFLOW_TASK_QUEUE,
    };
    return { temporal, workers, apis, apiUrls, fake, tls, inFlight: () => open.size, namespace, operatorEnv };
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
    const oldBuild = await stage('the build before the version boundary (git archive of the commit before it)', () =>
      prepareOldBuild(runDir),
    );
    say(
      `the cluster starts on ${oldBuild.commit}, the commit before the boundary, and is deployed to the working tree`,
    );
    cluster = await startCluster(build, cli.path, runDir, oldBuild);
    const c = cluster;
    const refusals = await stage("mTLS: the frontend refuses clients without the CA's client certificate", () =>
      refusedClients(c),
    );
    const linkProblems = await stage(
      'an answer link made on one API process, revoked on the other, refused by both',
      () => answerLinkRevocation(c.apiUrls, apiKey),
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
    let move: (NonNullable<Figures['move']> & { outcomes: MoveOutcome[] }) | undefined;
    const newWorkers = new Set<number>();
    const inFlightAtDeploy = new Set<number>();
    const requestsBefore = c.fake.requests.length;
    const second = await stage(
      `${exams} exams while a worker, the Temporal server and an API process are killed, then the build is deployed across the version boundary${moveAcross ? ' and waiting legacy turns are moved' : ''}`,
      () =>
        runExams(c, range(exams + 1, 2 * exams), 8, async (clients) => {
          const answered = () => clients.reduce((sum, client) => sum + client.record.answers.length, 0);
          const waiting = () => clients.filter((client) => client.waiting).length;
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
          // The rolling deploy across the boundary: each worker in turn stops (SIGTERM: it finishes its activities
          // within its grace) and the working tree's starts in its place, the other worker keeping the exams going; then
          // each API process the same way, so new runs start under the new types only once every worker has them.
          const ready = await until(midway, 120_000);
          for (const client of clients) if (!client.record.terminal) inFlightAtDeploy.add(client.n);
          const at = { streaming: c.inFlight(), waiting: waiting() };
          say(
            `deploying across the boundary, one process at a time: ${inFlightAtDeploy.size} exams in flight, ${at.streaming} model calls streaming, ${at.waiting} exams waiting${ready ? '' : ' (the run never got there: deploying anyway)'}`,
          );
          // Half the exams in flight hold their next answer until every worker runs the new build, so some exams wait
          // at a checkpoint across the whole deploy and go on on the new workers, however fast the others finish.
          const acrossDeploy = clients.filter((client) => client.n % 2 === 0 && !client.record.terminal);
          for (const client of acrossDeploy) client.holdAnswers();
          const deployStarted = Date.now();
          for (const worker of c.workers) {
            await worker.kill('SIGTERM');
            worker.root = repoRoot;
            await worker.start();
            newWorkers.add(worker.pid!);
          }
          for (const client of acrossDeploy) client.releaseAnswers();
          for (const api of c.apis) {
            await api.kill('SIGTERM');
            api.root = repoRoot;
            await api.start();
          }
          deploy = {
            ...at,
            inFlight: inFlightAtDeploy.size,
            seconds: (Date.now() - deployStarted) / 1000,
            legacyOnNewBuild: 0,
            moved: 0,
            nondeterministic: 0,
          };
          // The operator's drain: half the exams hold their answers, so they wait at a checkpoint while
          // `skillflow legacy --move` moves the waiting legacy turns; the other half answer as before.
          if (!moveAcross) return say('skillflow legacy --move left out (TOPOLOGY_MOVE=1 adds it)');
          const holding = clients.filter((client) => client.n % 2 === 0 && !client.record.terminal);
          for (const client of holding) client.holdAnswers();
          await until(() => holding.every((client) => client.waiting || client.record.terminal), 60_000);
          const held = holding.filter((client) => client.waiting).length;
          say(
            `skillflow legacy --move: ${held} exams holding their answers at a checkpoint, ${waiting()} waiting in all`,
          );
          try {
            const result = await legacyCommand(c.operatorEnv, runDir, true);
            const tally = (kind: MoveOutcome['result']) => result.outcomes.filter((o) => o.result === kind).length;
            const moved = { held, moved: tally('moved'), refused: tally('refused'), failed: tally('failed') };
            move = { ...moved, seconds: result.seconds, outcomes: result.outcomes };
            say(
              `moved ${moved.moved}, refused ${moved.refused}, failed ${moved.failed} in ${result.seconds.toFixed(1)} s`,
            );
          } finally {
            for (const client of holding) client.releaseAnswers();
          }
        }),
    );
    problems.push(...second.flatMap(checkExam));
    const repeats = repeatedModelCalls(c.fake.requests.slice(requestsBefore), second);
    for (const [n, count] of repeats)
      if (count > kills.length) problems.push(`exam ${n}: ${count} model calls repeated for ${kills.length} kills`);

    const third = await stage(`${newSideExams} exams on the deployed build`, () =>
      runExams(c, range(2 * exams + 1, 2 * exams + newSideExams), 3),
    );
    problems.push(...third.flatMap(checkExam));

    const figures = await stage('transcripts and runs of every turn (Temporal histories)', async () => {
      const connection = await Connection.connect(c.temporal.connection());
      try {
        const client = new Client({ connection, namespace: c.namespace });
        let misses = 0;
        let whole = 0;
        for (const record of [...first, ...second, ...third]) {
          if (!record.turnId) continue;
          const turn = await transcriptFigures(client, record.turnId);
          misses += turn.misses;
          whole += turn.wholeConversations;
        }
        const sides = await boundaryChecks(client, { second, third, inFlightAtDeploy, newWorkers, move });
        if (deploy) Object.assign(deploy, sides.deploy);
        problems.push(...sides.problems);
        return { misses, whole, newSide: sides.newSide };
      } finally {
        await connection.close();
      }
    });
    if (figures.misses > 0) problems.push(`${figures.misses} model calls missed their transcript`);
    if (!deploy) problems.push('the build was never deployed across the boundary');
    else {
      if (deploy.nondeterministic > 0)
        problems.push(`${deploy.nondeterministic} workflow tasks failed with a nondeterminism error after the deploy`);
      if (deploy.inFlight > 0 && deploy.legacyOnNewBuild + deploy.moved === 0)
        problems.push(`none of the ${deploy.inFlight} exams in flight at the deploy went on on the new build`);
    }
    if (!move) {
      if (moveAcross) problems.push('skillflow legacy --move never ran');
    } else {
      if (move.failed > 0) problems.push(`skillflow legacy --move failed for ${move.failed} runs`);
      if (move.held > 0 && move.moved === 0)
        problems.push(`skillflow legacy --move moved none of the ${move.held} exams waiting at a checkpoint`);
    }
    const left = await stage('skillflow legacy: the runs left on the old side', () =>
      legacyCommand(c.operatorEnv, runDir, false),
    );
    const legacyLeft = Object.fromEntries(left.counts.map((count) => [count.kind, count.running])) as Record<
      LegacyCount['kind'],
      number
    >;
    if (legacyLeft.turn > 0 || legacyLeft.skillRun > 0)
      problems.push(
        `${legacyLeft.turn} legacy turns and ${legacyLeft.skillRun} legacy skill runs still running at the end`,
      );

    const result: Figures = {
      exams: {
        first: first.length,
        second: second.length,
        third: third.length,
        completed: [...first, ...second, ...third].filter((r) => r.terminal?.type === 'done').length,
      },
      kills,
      deploy,
      move: move && {
        held: move.held,
        moved: move.moved,
        refused: move.refused,
        failed: move.failed,
        seconds: move.seconds,
      },
      newSide: figures.newSide,
      legacyLeft,
      repeatedModelCalls: [...repeats.values()].reduce((a, b) => a + b, 0),
      examsWithRepeats: [...repeats.values()].filter((count) => count > 0).length,
      maxRepeatsPerExam: Math.max(0, ...repeats.values()),
      resumedStreams: [...first, ...second, ...third].reduce((sum, r) => sum + r.resumes, 0),
      examsResumed: [...first, ...second, ...third].filter((r) => r.resumes > 0).length,
      mtlsRefusals: { tried: refusals.tried, refused: refusals.tried - refusals.answered.length },
      checkpointsAnswered: [...first, ...second, ...third].reduce((sum, r) => sum + r.answers.length, 0),
      answersRetried: [...first, ...second, ...third].reduce(
        (sum, r) => sum + r.answers.filter((a) => a.attempts > 1).length,
        0,
      ),
      transcriptMisses: figures.misses,
      modelCalls: c.fake.requests.length,
      deltas: [...first, ...second, ...third].reduce((sum, r) => sum + r.deltas, 0),
      problems,
      stages,
      totalSeconds: (Date.now() - started) / 1000,
    };
    for (const problem of problems) say(`FAILED: ${problem}`);
    say(
      `exams completed ${result.exams.completed}/${first.length + second.length + third.length}; kills ${kills.map((k) => k.what).join(', ')}; ` +
        `deploy: ${deploy ? `of ${deploy.inFlight} exams in flight, ${deploy.legacyOnNewBuild} finished on the legacy types on the new build, ${deploy.moved} moved across` : 'none'}; ` +
        `new side: ${figures.newSide} of ${third.length} exams on the new types only; ` +
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
