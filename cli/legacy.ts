import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { drainQueries, moveVerdictOf, sessionMoveVerdictOf, type LegacyKind } from '../core/legacy-drain';
import { ConfigError, loadTemporalTarget } from '../lib/config';
import { describeTemporalConnection, type TemporalProfile } from '../lib/temporal-connection';
import {
  legacyWorkflowTypes,
  moveToCurrentSignal,
  sessionStateQuery,
  turnStateQuery,
  workflowTypes,
} from '../workflows/definitions';
import { searchAttributes } from '../workflows/search-attributes';
import { formatTable } from './inbox';
import type { CliIo } from './io';

/**
 * `skillflow legacy [--move]`: the runs still on the old side of the version boundary, by type, talking to Temporal
 * directly (the worker's TEMPORAL_* settings and SKILLFLOW_TASK_QUEUE); with --move, each idle legacy session is asked
 * to continue as new on the current code, and each waiting legacy turn or skill run is reported as not movable yet.
 */
export interface LegacyOptions {
  move: boolean;
  /** How long --move waits for the runs it signalled to cross. */
  waitMs: number;
  /** Who asks (recorded in the signal). */
  by: string;
  json: boolean;
}

export const defaultMoveWaitMs = 30_000;
const queryDeadlineMs = 5_000;
const connectTimeoutMs = 5_000;
const moveConcurrency = 8;

const kinds: LegacyKind[] = ['session', 'turn', 'skillRun'];

export interface KindCount {
  kind: LegacyKind;
  type: string;
  running: number;
  /** Turns and skill runs only: waiting at a checkpoint (their own or one a skill run below asked), in a model call or tool. */
  waiting?: number;
  inCall?: number;
}

export type MoveOutcome =
  | { result: 'moved'; workflowId: string; from: string; to: string; waitingAt: string }
  | { result: 'refused'; workflowId: string; type: string; reason: string }
  | { result: 'failed'; workflowId: string; type: string; error: string };

export async function legacy(options: LegacyOptions, io: CliIo): Promise<number> {
  let target: { temporal: TemporalProfile; taskQueue: string };
  try {
    target = loadTemporalTarget(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr(`skillflow: ${err.message}\n`);
    return 2;
  }
  const where = describeTemporalConnection(target.temporal);
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...target.temporal.connection, connectTimeout: connectTimeoutMs });
  } catch (err) {
    io.stderr(
      `skillflow: cannot reach Temporal at ${where}: ${(err as Error).message}\n` +
        'Is it running? Give this command the Temporal settings the worker has (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, the TLS files or TEMPORAL_PROFILE).\n',
    );
    return 1;
  }
  try {
    const client = new Client({ connection, namespace: target.temporal.namespace });
    const before = await countLegacy(client, target.taskQueue);
    if (!options.move) {
      io.stdout(
        options.json
          ? `${JSON.stringify({ taskQueue: target.taskQueue, counts: before })}\n`
          : countReport(before, target.taskQueue),
      );
      return 0;
    }
    const outcomes = await moveWaiting(client, target.taskQueue, options);
    const after = await countLegacy(client, target.taskQueue);
    if (options.json) io.stdout(`${JSON.stringify({ taskQueue: target.taskQueue, outcomes, counts: after })}\n`);
    else io.stdout(`${moveReport(outcomes)}\n${countReport(after, target.taskQueue)}`);
    return outcomes.some((outcome) => outcome.result === 'failed') ? 1 : 0;
  } catch (err) {
    io.stderr(`skillflow: Temporal at ${where} refused: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await connection.close();
  }
}

/** The running legacy executions of each type on the task queue (visibility counts: they lag the runs by a moment). */
export async function countLegacy(client: Client, taskQueue: string): Promise<KindCount[]> {
  const count = async (query: string | undefined) =>
    query === undefined ? undefined : Number((await client.workflow.count(query)).count);
  return Promise.all(
    kinds.map(async (kind) => {
      const type = legacyWorkflowTypes[kind];
      const queries = drainQueries(kind, taskQueue);
      const [running, waiting] = await Promise.all([count(queries.running), count(queries.waiting)]);
      // Two counts, not one snapshot: a run that started to wait between them must not count as -1 in a call.
      const inCall = waiting === undefined ? undefined : Math.max(0, running! - waiting);
      return { kind, type, running: running!, ...(waiting === undefined ? {} : { waiting, inCall }) };
    }),
  );
}

function countReport(counts: KindCount[], taskQueue: string): string {
  const total = counts.reduce((sum, c) => sum + c.running, 0);
  if (total === 0) return `No run is left on the old side (task queue ${taskQueue}): its code can be deleted.\n`;
  const table = formatTable([
    ['TYPE', 'RUNNING', 'AT A CHECKPOINT', 'IN A CALL'],
    ...counts.map((c) => [c.type, String(c.running), String(c.waiting ?? '-'), String(c.inCall ?? '-')]),
  ]);
  const waiting = counts.reduce((sum, c) => sum + (c.waiting ?? 0), 0);
  const sessions = counts.find((c) => c.kind === 'session')?.running ?? 0;
  return (
    `Runs on the old side (task queue ${taskQueue}): ${total}\n${table}` +
    (waiting > 0
      ? 'The turns and skill runs waiting at a checkpoint finish on the legacy code once answered (skillflow inbox).\n'
      : '') +
    (sessions > 0 ? 'Move the legacy sessions with no turn running across with: skillflow legacy --move\n' : '')
  );
}

interface WaitingRun {
  workflowId: string;
  runId: string;
  kind: LegacyKind;
  type: string;
  /** Turns 0, skill runs their SkillflowDepth; sessions have none. */
  depth: number;
}

/** Lists the waiting legacy skill runs and turns and the running legacy sessions, signals the movable ones, waits for each to cross. */
async function moveWaiting(client: Client, taskQueue: string, options: LegacyOptions): Promise<MoveOutcome[]> {
  const runs: WaitingRun[] = [];
  for (const kind of ['skillRun', 'turn', 'session'] as const) {
    const type = legacyWorkflowTypes[kind];
    const queries = drainQueries(kind, taskQueue);
    for await (const info of client.workflow.list({ query: queries.waiting ?? queries.running })) {
      const depth = kind === 'skillRun' ? Number(info.typedSearchAttributes.get(searchAttributes.depth) ?? 1) : 0;
      runs.push({ workflowId: info.workflowId, runId: info.runId, kind, type, depth });
    }
  }
  const signalled = await inBatches(runs, (run) => signalIfMovable(client, run, options.by));
  const deadline = Date.now() + options.waitMs;
  return inBatches(signalled, (step) =>
    step.result === 'signalled' ? awaitCrossing(client, step.run, step.waitingAt, deadline) : Promise.resolve(step),
  );
}

type Signalled = { result: 'signalled'; run: WaitingRun; waitingAt: string } | MoveOutcome;

/**
 * Reads the run's state and signals it when it may move. Only sessions move for now: the current code's turn and skill
 * run cannot restore a moved run yet, so a waiting legacy turn or skill run is reported with what it waits at, and
 * finishes on the legacy code once answered.
 */
async function signalIfMovable(client: Client, run: WaitingRun, by: string): Promise<Signalled> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  const query = <T>(read: () => Promise<T>) => client.connection.withDeadline(Date.now() + queryDeadlineMs, read);
  try {
    if (run.kind !== 'session') {
      const verdict = moveVerdictOf(run.depth, await query(() => handle.query(turnStateQuery)));
      if (verdict.kind === 'not-waiting') return refused(run, `no longer waits at a checkpoint (${verdict.status})`);
      const asked =
        verdict.kind === 'mirrors'
          ? `${verdict.checkpoint.id} ${verdict.checkpoint.name}, asked by a skill run at depth ${verdict.askedAtDepth}`
          : `its own checkpoint ${verdict.checkpoint.id} ${verdict.checkpoint.name}`;
      return refused(
        run,
        `waits at ${asked}; not movable yet (the current code cannot restore a moved turn or skill run): it finishes on the legacy code once answered`,
      );
    }
    const verdict = sessionMoveVerdictOf(await query(() => handle.query(sessionStateQuery)));
    if (verdict.kind === 'closed') return refused(run, 'closed: it ends by itself');
    if (verdict.kind === 'busy')
      return refused(
        run,
        `its turn ${verdict.activeTurnId} is running: the session can move once that turn has ended (run --move again then)`,
      );
    await handle.signal(moveToCurrentSignal, { by });
    return { result: 'signalled', run, waitingAt: 'no turn (idle)' };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return refused(run, 'ended before it could be moved');
    return { result: 'failed', workflowId: run.workflowId, type: run.type, error: (err as Error).message };
  }
}

/** Polls the workflow id's current run until it runs the current type, ends, or the deadline passes. */
async function awaitCrossing(
  client: Client,
  run: WaitingRun,
  waitingAt: string,
  deadline: number,
): Promise<MoveOutcome> {
  const to = workflowTypes[run.kind];
  for (;;) {
    try {
      const current = await client.workflow.getHandle(run.workflowId).describe();
      if (current.type === to) return { result: 'moved', workflowId: run.workflowId, from: run.type, to, waitingAt };
      if (current.status.name !== 'RUNNING') return refused(run, `ended (${current.status.name}) before it moved`);
    } catch (err) {
      return { result: 'failed', workflowId: run.workflowId, type: run.type, error: (err as Error).message };
    }
    if (Date.now() > deadline)
      return refused(
        run,
        "still on the old side after the wait: answered meanwhile, not movable (the worker logs why), or no worker with the boundary's code took the signal yet; run --move again later",
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function refused(run: WaitingRun, reason: string): MoveOutcome {
  return { result: 'refused', workflowId: run.workflowId, type: run.type, reason };
}

/** `act` over the items, at most moveConcurrency at a time, results in the items' order. */
async function inBatches<T, R>(items: T[], act: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await act(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(moveConcurrency, items.length) }, lane));
  return results;
}

function moveReport(outcomes: MoveOutcome[]): string {
  if (outcomes.length === 0)
    return 'No legacy run waits at a checkpoint and no legacy session is idle: nothing to move.\n';
  const lines = outcomes.map((o) => {
    if (o.result === 'moved') return `moved    ${o.workflowId}  ${o.from} -> ${o.to}, waiting at ${o.waitingAt}`;
    if (o.result === 'refused') return `refused  ${o.workflowId}  ${o.reason}`;
    return `failed   ${o.workflowId}  ${o.error}`;
  });
  const tally = (result: MoveOutcome['result']) => outcomes.filter((o) => o.result === result).length;
  return `${lines.join('\n')}\nMoved ${tally('moved')}, refused ${tally('refused')}, failed ${tally('failed')}.\n`;
}
