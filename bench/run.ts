/**
 * `npm run bench`: turn throughput and latency of the whole stack, measured against a baseline in the same run.
 *
 * Starts its own in-memory Temporal dev server (the CLI from lib/temporal-cli.ts, cached under .cache/), runs the
 * worker and the real API in this process (the API over real HTTP on 127.0.0.1), and answers model calls with the
 * scripted fake Anthropic server streaming with a pause between SSE events. A client in this process sends messages,
 * follows each turn's SSE stream to its terminal event and answers checkpoints through the API's checkpoint route.
 *
 * First, before the stack starts, how the skill sanitizer's time grows when its input doubles (bench/sanitizer.ts;
 * `npm run bench -- sanitizer` runs only that part, BENCH_SANITIZER=0 skips it).
 *
 * Scenarios, in one run: plain turns (one model call) one at a time, then BENCH_CONCURRENCY of them at once; exam
 * turns (exam-mode-tuner's plan: seven model calls, checkpoints exam_params and post_exam_routing answered through
 * the API) one at a time, then BENCH_CONCURRENCY at once. docs/benchmarks.md says what each column means.
 *
 * Then one worker against three: BENCH_WORKER_EXAMS (5) exams of 8 questions at once with the one worker, the same
 * with two more workers added on the task queue (all sharing the transcript store), comparing transcript misses and
 * history per round.
 *
 * Then the table (bench/rounds.ts): BENCH_ROUND_EXAMS (4) exams of BENCH_ROUND_QUESTIONS (50) questions one at a
 * time through skillflow and then through a plain in-process loop (the Anthropic SDK, same fake answering at once, same
 * tools): engine time per tool round and its overhead over the loop, checkpoint resume latency, history per round and
 * the prompt-cache read ratio from round 2.
 *
 * Then what watching costs the worker (bench/watchers.ts): BENCH_WATCH_TURNS (3) exam turns one at a time with no
 * watcher besides the driving client, then the same with BENCH_WATCHERS (100) SSE clients on each turn: worker
 * workflow tasks, API queries and describes per turn.
 *
 * Last, the scale scenarios (bench/scale.ts), each on a worker process of its own: BENCH_CONCURRENT_EXAMS (50) exams of
 * BENCH_CONCURRENT_QUESTIONS (8) questions at once (rounds per second), then BENCH_PAUSED_EXAMS (1000) exams of
 * BENCH_PAUSED_QUESTIONS (1) question left at a checkpoint, BENCH_PAUSED_IN_FLIGHT (50) requests at a time (their
 * messages padded to BENCH_PAUSED_MESSAGE_CHARS, 0: not padded; SKILLFLOW_MAX_MESSAGE_CHARS and _BYTES raise the
 * API's limits), and then
 * all answered (the worker's RSS with them paused).
 *
 * Environment: BENCH_CHUNK_DELAY_MS (20), BENCH_CONCURRENCY (50), BENCH_BASELINE_TURNS (10), BENCH_EXAM_BASELINE_TURNS
 * (5), BENCH_WORKER_EXAMS (5; 0 skips the comparison), BENCH_WATCH_TURNS (3; 0 skips the watchers measurement),
 * BENCH_WATCHERS (100), the scale sizes above (0 skips a part; BENCH_WORKER_NODE_OPTIONS: NODE_OPTIONS of their worker;
 * BENCH_WORKER_NODE_ARGS: Node's arguments for it, e.g. --cpu-prof, which Node 20 refuses in NODE_OPTIONS), BENCH_TIMEOUT_MS (900000: abort, clean up and exit 1),
 * BENCH_WRITE=0 to leave docs/benchmarks.md's current figures as they are. Exits 0 when every turn completed with the expected number of
 * model calls and three workers missed no transcript and kept the history per round within 10% of one worker's.
 */
import { setMaxListeners } from 'node:events';
import { sessionWorkflowId } from '../core/turn';
import { BenchClient } from './client';
import { describeHistory, summarizeHistory } from './history';
import { allTables, describeMachine, markdownSection, writeCurrentFigures, type Machine } from './report';
import { measureRounds, roundsTable, type RoundsResult } from './rounds';
import { measureScale, scaleSettings, type ScaleResult } from './scale';
import { measureSanitizer, sanitizerTable, writeSanitizerFigures } from './sanitizer';
import { runScenario, type ScenarioResult, type ScenarioSpec } from './scenario';
import { setting } from './settings';
import { startStack, type Stack } from './stack';
import { runTurn } from './turn';
import { measureWatchers, watchersTable, type WatchersResult } from './watchers';
import { measureWorkers, workersTable, type WorkersResult } from './workers';

const log = (line: string) => console.log(`[bench] ${line}`);

async function measure(
  stack: Stack,
  client: BenchClient,
  scenarios: ScenarioSpec[],
  signal: AbortSignal,
  first: () => Promise<void>,
): Promise<ScenarioResult[]> {
  log('warm-up: one plain turn and one exam turn (not measured)');
  for (const kind of ['plain', 'exam'] as const) {
    signal.throwIfAborted();
    const warm = await runTurn(client, await client.createSession(), kind, 0);
    if (!warm.ok) throw new Error(`warm-up ${kind} turn failed: ${warm.error}`);
  }
  await first();
  const results: ScenarioResult[] = [];
  for (const spec of scenarios) {
    if (spec.turns === 0) continue;
    signal.throwIfAborted();
    log(`${spec.name}: ${spec.turns} ${spec.kind} turns, ${spec.concurrency} at a time...`);
    const result = await runScenario(spec, stack, client);
    signal.throwIfAborted();
    log(
      `  ${result.turnsPerSec.toFixed(2)} turns/s, p50 ${Math.round(result.latency.p50)} ms, ${result.errors} errors`,
    );
    results.push(result);
  }
  return results;
}

/** The sanitizer's part: its problems (none when every pattern is linear). */
async function benchSanitizer(machine: Machine): Promise<string[]> {
  log('sanitizer: each adversarial pattern doubled from 256 KiB, in a worker thread with a CPU budget...');
  const result = await measureSanitizer(log);
  console.log(`\n${sanitizerTable(result)}\n`);
  if (process.env.BENCH_WRITE !== '0')
    log(`wrote the sanitizer's figures to ${writeSanitizerFigures(machine, result)}`);
  for (const problem of result.failed) log(`FAILED ${problem}`);
  return result.failed;
}

async function main(): Promise<number> {
  if (process.argv[2] === 'sanitizer') return (await benchSanitizer(describeMachine())).length === 0 ? 0 : 1;
  const chunkDelayMs = setting('BENCH_CHUNK_DELAY_MS', 20);
  const concurrency = setting('BENCH_CONCURRENCY', 50);
  const baselineTurns = setting('BENCH_BASELINE_TURNS', 10);
  const examBaselineTurns = setting('BENCH_EXAM_BASELINE_TURNS', 5);
  const workerExams = setting('BENCH_WORKER_EXAMS', 5);
  const roundExams = setting('BENCH_ROUND_EXAMS', 4);
  const roundQuestions = setting('BENCH_ROUND_QUESTIONS', 50);
  const timeoutMs = setting('BENCH_TIMEOUT_MS', 900_000);
  const watchTurns = setting('BENCH_WATCH_TURNS', 3);
  const watcherCount = setting('BENCH_WATCHERS', 100);
  const scale = scaleSettings();
  const machine = describeMachine();
  // First, on a machine the stack does not load yet; outside the run's deadline, which bounds the stack's parts.
  const sanitizerProblems = setting('BENCH_SANITIZER', 1) > 0 ? await benchSanitizer(machine) : [];
  const abort = new AbortController();
  // Every request and stream of the run listens to this one signal: the 1,000 paused exams' streams are more than
  // Node's default warning threshold, which is not a leak here.
  setMaxListeners(0, abort.signal);
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    abort.abort(new Error(`the benchmark took longer than ${timeoutMs} ms`));
  }, timeoutMs);
  process.once('SIGINT', () => abort.abort(new Error('interrupted')));
  // Whatever goes wrong, the dev server and the worker must still be stopped: turn it into an abort, not a crash.
  const unexpected = (err: unknown) => {
    log(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    abort.abort(err);
  };
  process.on('unhandledRejection', unexpected);
  process.on('uncaughtException', unexpected);

  let stack: Stack | undefined;
  let starting: Promise<Stack> | undefined;
  try {
    const aborted = new Promise<never>((_, reject) =>
      abort.signal.addEventListener('abort', () => reject(abort.signal.reason)),
    );
    aborted.catch(() => undefined);
    starting = startStack(chunkDelayMs, log);
    stack = await Promise.race([starting, aborted]);
    const workerStopped = stack.workerRunning.then(() =>
      Promise.reject(new Error('the worker stopped during the run')),
    );
    workerStopped.catch(() => undefined);
    const client = new BenchClient(stack.apiUrl, stack.apiKey, abort.signal);
    const scenarios: ScenarioSpec[] = [
      { name: 'baseline: plain, one at a time', kind: 'plain', turns: baselineTurns, concurrency: 1 },
      { name: `plain, ${concurrency} concurrent`, kind: 'plain', turns: concurrency, concurrency },
      { name: 'baseline: exam, one at a time', kind: 'exam', turns: examBaselineTurns, concurrency: 1 },
      { name: `exam, ${concurrency} concurrent`, kind: 'exam', turns: concurrency, concurrency },
    ];
    let rounds: RoundsResult | undefined;
    // The rounds go first, on a quiet worker (after the warm-up): the table is measured one turn at a time.
    const beforeScenarios = async () => {
      if (roundExams === 0) return;
      log(
        `rounds: ${roundExams} exams of ${roundQuestions} questions through skillflow, then through the in-process loop...`,
      );
      const running = stack as Stack;
      running.setExamDelay(0);
      rounds = await measureRounds(running, client, roundExams, roundQuestions, 500);
      running.setExamDelay(chunkDelayMs);
    };
    const measuring = measure(stack, client, scenarios, abort.signal, beforeScenarios);
    measuring.catch(() => undefined);
    const results = await Promise.race([measuring, aborted, workerStopped]);
    const watching: WatchersResult[] = [];
    if (watchTurns > 0) {
      for (const watchers of [0, watcherCount]) {
        log(`watchers: ${watchTurns} exam turns, one at a time, each followed by ${watchers} more SSE clients...`);
        watching.push(await measureWatchers(stack, client, watchers, watchTurns));
      }
    }
    const workers: WorkersResult[] = [];
    if (workerExams > 0) {
      log(`one worker: ${workerExams} exams of 8 questions at once...`);
      workers.push(await measureWorkers(stack, client, 1, workerExams, 8, 1_000));
      await stack.addWorker('bench-worker-2');
      await stack.addWorker('bench-worker-3');
      log(`three workers sharing the store: ${workerExams} exams of 8 questions at once...`);
      workers.push(await measureWorkers(stack, client, 3, workerExams, 8, 2_000));
    }
    // Raced like the rest: an abort must not wait for a scale scenario to end (its worker process dies with this one).
    const scaling = measureScale(stack, scale, abort.signal, log);
    scaling.catch(() => undefined);
    const scaled: ScaleResult = await Promise.race([scaling, aborted, workerStopped]);

    console.log(`\n${allTables(results)}\n`);
    const histories: string[] = [];
    for (const { name, sample } of results) {
      if (!sample) continue;
      const turn = describeHistory(await summarizeHistory(stack.probeClient, sample.turnId));
      const session = describeHistory(await summarizeHistory(stack.probeClient, sessionWorkflowId(sample.sessionId)));
      histories.push(`${name}: the turn ${turn}; its session ${session}`);
    }
    for (const line of histories) log(line);
    const workersSection = workers.length > 0 ? `\n\n#### One worker and three\n\n${workersTable(workers)}` : '';
    if (workersSection) console.log(workersSection);
    const watchersSection =
      watching.length > 0 ? `\n\n#### What watching a turn costs the worker\n\n${watchersTable(watching)}` : '';
    if (watchersSection) console.log(watchersSection);
    const roundsSection = rounds
      ? `\n\n#### A model round: skillflow against an in-process loop\n\n${roundsTable(rounds)}`
      : '';
    if (roundsSection) console.log(roundsSection);
    const scaleSection = scaled.section ? `\n\n${scaled.section}` : '';
    if (scaleSection) console.log(scaleSection);
    const rateLimited = client.statuses.get(429) ?? 0;
    if (rateLimited > 0) log(`the API answered 429 (rate limited) ${rateLimited} times with its default limits`);
    if (process.env.BENCH_WRITE !== '0')
      log(
        `wrote the current figures of ${writeCurrentFigures(markdownSection(machine, { chunkDelayMs, baselineTurns, examBaselineTurns, concurrency }, results, client.statuses, histories) + roundsSection + watchersSection + workersSection + scaleSection)}`,
      );
    const failed = results.filter((r) => r.errors > 0 || r.modelCalls !== r.expectedModelCalls);
    for (const r of failed)
      log(
        `FAILED ${r.name}: ${r.errors} errors, ${r.modelCalls}/${r.expectedModelCalls} model calls; ${r.errorSamples.join(' | ')}`,
      );
    const [one, three] = workers;
    const workerProblems = [
      ...workers.flatMap((w) => w.failed),
      ...(three && three.misses > 0 ? [`three workers missed ${three.misses} transcripts`] : []),
      ...(three && three.bytesPerRound > one.bytesPerRound * 1.1
        ? [
            `three workers: ${Math.round(three.bytesPerRound)} bytes of history per round, one: ${Math.round(one.bytesPerRound)}`,
          ]
        : []),
    ];
    for (const problem of workerProblems) log(`FAILED workers: ${problem}`);
    const watchProblems = watching.flatMap((w) => w.failed);
    for (const problem of watchProblems) log(`FAILED watchers: ${problem}`);
    for (const problem of rounds?.engine.failed ?? []) log(`FAILED rounds: ${problem}`);
    for (const problem of scaled.failed) log(`FAILED ${problem}`);
    return failed.length === 0 &&
      sanitizerProblems.length === 0 &&
      workerProblems.length === 0 &&
      watchProblems.length === 0 &&
      (rounds?.engine.failed.length ?? 0) === 0 &&
      scaled.failed.length === 0
      ? 0
      : 1;
  } catch (err) {
    log(`${timedOut ? 'aborted' : 'failed'}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    clearTimeout(deadline);
    if (!abort.signal.aborted) abort.abort(new Error('done'));
    // Cleanup is bounded too: a stuck shutdown must not keep the process alive.
    const hardStop = setTimeout(() => {
      log('cleanup took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    hardStop.unref();
    log('stopping the API, the worker, the fake model and the dev server...');
    stack ??= await starting?.catch(() => undefined);
    await stack?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
