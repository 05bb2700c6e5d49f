import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { sessionWorkflowId } from '../../core/turn';
import { legacyWorkflowTypes, workflowTypes } from '../../workflows/definitions';
import { repoRoot } from './cluster';
import type { ExamRecord } from './exam-client';
import type { MoveOutcome } from './legacy-command';

/**
 * The deploy across the version boundary. The cluster starts on the build before it: the commit before
 * workflows/legacy/ first appeared (or TOPOLOGY_OLD_COMMIT), unpacked from git into the run's folder, whose workers
 * and API processes run today's workflow types with today's code. The deploy replaces them with the working tree, whose
 * workers run those types on the code frozen in workflows/legacy/ and start new runs under the new names.
 */
export interface OldBuild {
  root: string;
  commit: string;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();

/** The last commit before the boundary: the parent of the commit that first added workflows/legacy/. */
export function preBoundaryCommit(): string {
  const chosen = process.env.TOPOLOGY_OLD_COMMIT?.trim();
  if (chosen) return git('rev-parse', '--short', `${chosen}^{commit}`);
  const added = git('log', '--diff-filter=A', '--format=%H', '--reverse', '--', 'workflows/legacy').split('\n')[0];
  if (!added)
    throw new Error(
      'workflows/legacy/ is in no commit: there is no version boundary to deploy across (set TOPOLOGY_OLD_COMMIT)',
    );
  return git('rev-parse', '--short', `${added}^`);
}

/** The pre-boundary tree as it was committed (fixtures left out), with the repository's node_modules. */
export async function prepareOldBuild(runDir: string): Promise<OldBuild> {
  const commit = preBoundaryCommit();
  const root = path.join(runDir, `old-build-${commit}`);
  fs.mkdirSync(root, { recursive: true });
  await new Promise<void>((resolve, reject) => {
    const archive = spawn('git', ['archive', '--format=tar', commit, '--', '.', ':(exclude)test/fixtures'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const untar = spawn('tar', ['-x', '-C', root], { stdio: ['pipe', 'inherit', 'inherit'] });
    archive.stdout.pipe(untar.stdin);
    let failed = false;
    const fail = (what: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`${what} exited with ${code} unpacking ${commit}`));
      }
    };
    archive.on('close', fail('git archive'));
    untar.on('close', (code) => (code === 0 ? !failed && resolve() : fail('tar')(code)));
  });
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return { root, commit };
}

const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

/** One run of a workflow id: its type, and which workers completed its workflow tasks. */
export interface RunFigures {
  runId: string;
  type: string;
  /** Worker identities (`pid@host`) that completed its workflow tasks, the last one last. */
  workers: string[];
  nondeterministic: number;
}

/** Every run of a workflow id, first to last: continue-as-new links each to the one before. */
export async function runsOf(client: Client, workflowId: string): Promise<RunFigures[]> {
  const runs: RunFigures[] = [];
  let runId: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const run: RunFigures = { runId: runId ?? '', type: '', workers: [], nondeterministic: 0 };
    let previous: string | undefined;
    for (const event of history.events ?? []) {
      const started = event.workflowExecutionStartedEventAttributes;
      if (started) {
        run.type = started.workflowType?.name ?? '';
        previous = started.continuedExecutionRunId || undefined;
        run.runId = run.runId || started.originalExecutionRunId || '';
      }
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
        const identity = event.workflowTaskCompletedEventAttributes?.identity;
        if (identity) run.workers.push(identity);
      }
      const failed = event.workflowTaskFailedEventAttributes;
      if (failed?.cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR)
        run.nondeterministic++;
    }
    runs.unshift(run);
    if (!previous) return runs;
    runId = previous;
  }
  throw new Error(`${workflowId}: more than 100 runs`);
}

/** Whether one of `pids` is the worker identity (the SDK's default, `pid@host`). */
export const byWorkerOf = (pids: Set<number>) => (identity: string) => pids.has(Number(identity.split('@')[0]));

export interface BoundaryInput {
  /** The exams of the round the deploy happened in, and those started after it. */
  second: ExamRecord[];
  third: ExamRecord[];
  inFlightAtDeploy: Set<number>;
  /** The pids of the workers started from the working tree. */
  newWorkers: Set<number>;
  move?: { outcomes: MoveOutcome[] };
}

/**
 * What the histories say about the deploy: every exam of the deploy's round started as a legacy turn and either
 * finished as one or, moved, continued as a new one (never back); those in flight at the deploy went on on the new
 * build's workers; the moves the command reported are the ones the histories show; exams after the deploy ran under
 * the new types only.
 */
export async function boundaryChecks(
  client: Client,
  input: BoundaryInput,
): Promise<{
  deploy: { legacyOnNewBuild: number; moved: number; nondeterministic: number };
  newSide: number;
  problems: string[];
}> {
  const problems: string[] = [];
  const deploy = { legacyOnNewBuild: 0, moved: 0, nondeterministic: 0 };
  const onNewBuild = byWorkerOf(input.newWorkers);
  const reportedMoved = new Set(
    (input.move?.outcomes ?? []).flatMap((o) => (o.result === 'moved' ? [o.workflowId] : [])),
  );
  for (const record of input.second) {
    if (!record.turnId) continue;
    const runs = await runsOf(client, record.turnId);
    deploy.nondeterministic += runs.reduce((sum, run) => sum + run.nondeterministic, 0);
    const types = runs.map((run) => run.type);
    const where = `exam ${record.n} (${record.turnId})`;
    const crossed = types.indexOf(workflowTypes.turn);
    const wellFormed =
      types[0] === legacyWorkflowTypes.turn &&
      types.every((type, i) => type === (crossed >= 0 && i >= crossed ? workflowTypes.turn : legacyWorkflowTypes.turn));
    if (!wellFormed)
      problems.push(
        `${where}: ran as ${types.join(' -> ')}, not ${legacyWorkflowTypes.turn} (-> ${workflowTypes.turn})`,
      );
    if (crossed >= 0 !== reportedMoved.has(record.turnId))
      problems.push(
        `${where}: its history ${crossed >= 0 ? 'shows' : 'does not show'} a move, skillflow legacy --move ${reportedMoved.has(record.turnId) ? 'reported' : 'did not report'} one`,
      );
    if (!input.inFlightAtDeploy.has(record.n)) continue;
    if (crossed >= 0) deploy.moved++;
    else if (onNewBuild(runs.at(-1)?.workers.at(-1) ?? '')) deploy.legacyOnNewBuild++;
  }
  let newSide = 0;
  for (const record of input.third) {
    if (!record.turnId || !record.sessionId) continue;
    const turnRuns = await runsOf(client, record.turnId);
    const sessionRuns = await runsOf(client, sessionWorkflowId(record.sessionId));
    deploy.nondeterministic += [...turnRuns, ...sessionRuns].reduce((sum, run) => sum + run.nondeterministic, 0);
    const turnTypes = turnRuns.map((run) => run.type);
    const sessionTypes = sessionRuns.map((run) => run.type);
    if (turnTypes.every((t) => t === workflowTypes.turn) && sessionTypes.every((t) => t === workflowTypes.session))
      newSide++;
    else
      problems.push(
        `exam ${record.n}, started after the deploy: its session ran as ${sessionTypes.join(' -> ')} and its turn as ${turnTypes.join(' -> ')}, not ${workflowTypes.session} and ${workflowTypes.turn}`,
      );
  }
  return { deploy, newSide, problems };
}
