import { randomBytes } from 'node:crypto';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TurnInput } from '../core/turn';
import { runCli } from '../cli/skillflow';
import type { KindCount, MoveOutcome } from '../cli/legacy';
import { legacyWorkflowTypes, moveToCurrentSignal, turnStateQuery, workflowTypes } from '../workflows/definitions';
import { examModel, examMessage, examRoundOf } from './support/exam-script';
import { text } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { fastSettings } from './support/turns';

/** `skillflow legacy` against the suite's Temporal server: legacy turns on a worker that registers both sides. */
describe('skillflow legacy', () => {
  const harness = useWorkerHarness('legacy-cli');
  const started: WorkflowHandle[] = [];
  afterEach(async () => {
    for (const handle of started.splice(0)) await handle.terminate('test over').catch(() => undefined);
  });

  async function cli(...args: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      env: { TEMPORAL_ADDRESS: harness.env.address, SKILLFLOW_TASK_QUEUE: harness.taskQueue },
      cwd: process.cwd(),
    });
    return { code, stdout, stderr };
  }

  /** Starts a turn of the old side directly (as a session of today's code would), on the harness's queue. */
  async function startLegacyTurn(message: string): Promise<WorkflowHandleWithFirstExecutionRunId> {
    const sessionId = randomBytes(10).toString('hex');
    const turnId = `turn-${sessionId}-1`;
    const input: TurnInput = {
      turnId,
      sessionId,
      userId: 'tester',
      message,
      history: [],
      createdAt: new Date().toISOString(),
      settings: fastSettings,
    };
    const handle = await harness.env.client.workflow.start(legacyWorkflowTypes.turn, {
      workflowId: turnId,
      taskQueue: harness.taskQueue,
      args: [input],
    });
    started.push(handle);
    return handle;
  }

  /** Runs `skillflow legacy --json` until the turn counts match (visibility lags the runs), for at most 20 s. */
  async function countsOnce(expected: Omit<KindCount, 'kind' | 'type'>): Promise<KindCount[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { code, stdout, stderr } = await cli('legacy', '--json');
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const counts = (JSON.parse(stdout) as { counts: KindCount[] }).counts;
      const turns = counts.find((c) => c.kind === 'turn')!;
      if (turns.running === expected.running && turns.waiting === expected.waiting && turns.inCall === expected.inCall)
        return counts;
      if (Date.now() > deadline) throw new Error(`counts never matched ${JSON.stringify(expected)}: ${stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function waitingAt(handle: WorkflowHandle, name: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while ((await handle.query(turnStateQuery)).pendingCheckpoint?.name !== name) {
      if (Date.now() > deadline) throw new Error(`${handle.workflowId} never waited at ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('says nothing is left on a queue without legacy runs', async () => {
    const { code, stdout } = await cli('legacy');
    expect(code).toBe(0);
    expect(stdout).toBe(`No run is left on the old side (task queue ${harness.taskQueue}): its code can be deleted.\n`);
  });

  it('counts the legacy turns by what they do: waiting at a checkpoint, in a model call', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const exam = examModel();
    harness.fake.respond(async (body, request) => {
      if (examRoundOf(body)) return exam(body, request);
      await held;
      return { content: [text('Done at last.')] };
    });
    const waiting = await startLegacyTurn(examMessage(2));
    await startLegacyTurn('A question the model takes its time over.');
    await waitingAt(waiting, 'exam_params');

    const counts = await countsOnce({ running: 2, waiting: 1, inCall: 1 });
    expect(counts).toEqual([
      { kind: 'session', type: legacyWorkflowTypes.session, running: 0 },
      { kind: 'turn', type: legacyWorkflowTypes.turn, running: 2, waiting: 1, inCall: 1 },
      { kind: 'skillRun', type: legacyWorkflowTypes.skillRun, running: 0, waiting: 0, inCall: 0 },
    ]);
    const { stdout } = await cli('legacy');
    expect(stdout).toContain(`Runs on the old side (task queue ${harness.taskQueue}): 2\n`);
    expect(stdout).toMatch(/turnWorkflow\s+2\s+1\s+1\n/);
    expect(stdout).toContain('finish on the legacy code once answered (skillflow inbox)');
    release();
  });

  it('--move reports a legacy turn waiting at its own checkpoint as not movable yet; it stays legacy and waiting', async () => {
    harness.fake.respond(examModel());
    const waiting = await startLegacyTurn(examMessage(2));
    await waitingAt(waiting, 'exam_params');
    await countsOnce({ running: 1, waiting: 1, inCall: 0 });

    const moving = await cli('legacy', '--move', '--json', '--wait', '5', '--by', 'ops-test');
    expect(moving.code).toBe(0);
    const { outcomes } = JSON.parse(moving.stdout) as { outcomes: MoveOutcome[] };
    expect(outcomes).toEqual([
      {
        result: 'refused',
        workflowId: waiting.workflowId,
        type: legacyWorkflowTypes.turn,
        reason:
          'waits at its own checkpoint cp-1 exam_params; not movable yet (the current code cannot restore a moved turn or skill run): it finishes on the legacy code once answered',
      },
    ]);
    const text = await cli('legacy', '--move', '--wait', '5');
    expect(text.stdout).toContain(`refused  ${waiting.workflowId}  waits at its own checkpoint cp-1 exam_params`);
    expect(text.stdout).toContain('Moved 0, refused 1, failed 0.\n');
    // Sent by hand, the signal moves nothing either: the legacy turn has no handler for it yet.
    await waiting.signal(moveToCurrentSignal, { by: 'ops-test' });
    await waitingAt(waiting, 'exam_params');
    const now = await waiting.describe();
    expect({ type: now.type, status: now.status.name }).toEqual({ type: legacyWorkflowTypes.turn, status: 'RUNNING' });
    expect((await waiting.query(turnStateQuery)).pendingCheckpoint?.name).toBe('exam_params');
  });

  it('--move moves a legacy session with no turn running across: it continues as new as a session', async () => {
    const sessionId = randomBytes(10).toString('hex');
    const session = await harness.env.client.workflow.start(legacyWorkflowTypes.session, {
      workflowId: `session-${sessionId}`,
      taskQueue: harness.taskQueue,
      args: [{ sessionId, userId: 'tester', createdAt: new Date().toISOString(), settings: fastSettings }],
    });
    started.push(session);
    await countsOnceFor('session', 1);

    const moving = await cli('legacy', '--move', '--json', '--wait', '20', '--by', 'ops-test');
    expect(moving.code).toBe(0);
    const { outcomes } = JSON.parse(moving.stdout) as { outcomes: MoveOutcome[] };
    expect(outcomes).toEqual([
      {
        result: 'moved',
        workflowId: session.workflowId,
        from: legacyWorkflowTypes.session,
        to: workflowTypes.session,
        waitingAt: 'no turn (idle)',
      },
    ]);
    const now = await harness.env.client.workflow.getHandle(session.workflowId).describe();
    expect({ type: now.type, status: now.status.name }).toEqual({ type: workflowTypes.session, status: 'RUNNING' });
    started.push(harness.env.client.workflow.getHandle(session.workflowId));
  });

  /** Waits (20 s at most) until `skillflow legacy --json` counts `running` runs of the kind. */
  async function countsOnceFor(kind: KindCount['kind'], running: number): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const counts = (JSON.parse((await cli('legacy', '--json')).stdout) as { counts: KindCount[] }).counts;
      if (counts.find((c) => c.kind === kind)?.running === running) return;
      if (Date.now() > deadline) throw new Error(`never ${running} ${kind} runs: ${JSON.stringify(counts)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it('refuses bad options and says what to fix when Temporal cannot be reached', async () => {
    expect((await cli('legacy', '--wait', '5')).stderr).toContain('--wait and --by go with --move');
    expect((await cli('legacy', '--move', '--wait', 'soon')).stderr).toContain('--wait must be a whole number');
    expect((await cli('legacy', 'now')).code).toBe(2);
    let stderr = '';
    const code = await runCli(['legacy'], {
      stdout: () => undefined,
      stderr: (t) => void (stderr += t),
      env: { TEMPORAL_ADDRESS: '127.0.0.1:1' },
      cwd: process.cwd(),
    });
    expect(code).toBe(1);
    expect(stderr).toContain('skillflow: cannot reach Temporal at 127.0.0.1:1 (namespace default, plain TCP');
    expect(stderr).toContain('Give this command the Temporal settings the worker has');
    let settings = '';
    const wrong = await runCli(['legacy'], {
      ...ioWith({ TEMPORAL_ADDRESS: 'nowhere' }),
      stderr: (t) => void (settings += t),
    });
    expect(wrong).toBe(2);
    expect(settings).toContain('TEMPORAL_ADDRESS="nowhere" must be host:port');
  });
});

function ioWith(env: Record<string, string>) {
  return { stdout: () => undefined, stderr: (_: string) => undefined, env, cwd: process.cwd() };
}
