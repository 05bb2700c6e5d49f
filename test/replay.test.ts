import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { PendingCheckpoint } from '../core/checkpoints';
import { defaultTurnSettings } from '../core/settings';
import {
  answerCheckpointUpdate,
  checkpointDecisionSignal,
  sessionStateQuery,
  startTurnUpdate,
  turnEventsQuery,
  turnStateQuery,
  workflowTypes,
} from '../workflows/definitions';
import type { sessionWorkflow } from '../workflows/session';
import { examOutput } from './support/exam-script';
import { text, toolUse, type FakeAnthropic, type ScriptedBlock } from './support/fake-anthropic';
import { defineTool, Type } from '../lib/tools/define-tool';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { answerNext, startTurn } from './support/turns';

/**
 * Replays recorded histories against the current workflow code: a change that would break turns already running
 * fails here. Histories recorded by this test are replayed at once; the committed ones in test/fixtures/histories
 * keep turns of older code honest across changes (docs/operators.md, "Changing workflow code").
 *
 * Each recording test keeps exactly its named scenarios and replays them at once; the committed set must hold the
 * scenarios of the replay gate (gateScenarios), and a history made nondeterministic must be refused.
 *
 * `SKILLFLOW_RECORD_HISTORIES=1` also writes this run's histories to test/fixtures/histories/<commit>/, named by
 * scenario, once every recording test's have replayed: do it with the outgoing code before changing workflow code. It refuses to
 * write over a folder that exists (fixtures are never re-recorded) or to record from uncommitted workflow code.
 * (The ba8b671 set also holds scenarios of defects that code had, which later code no longer runs the same way:
 * out-of-range params proposed, refused checkpoints past the violation limit, rounds past a skill's max-iterations.)
 */
const fixturesDir = path.resolve(__dirname, 'fixtures', 'histories');
const recording = process.env.SKILLFLOW_RECORD_HISTORIES === '1';
const run = promisify(execFile);

interface Recorded {
  name: string;
  workflowId: string;
  history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
  /** The history as the Temporal CLI prints it, kept only when recording fixtures. */
  json?: string;
}

const exam = 'exam-mode-tuner';
const ask = (checkpoint: string, kind: 'approval' | 'question', extra: Record<string, unknown> = {}) =>
  toolUse('request_human_approval', { checkpoint, summary: `About ${checkpoint}`, kind, ...extra });
const loadSkill = (name = exam) => toolUse('load_skill', { name });
const subskill = (name: string, skill = exam) => toolUse('load_subskill', { skill, subskill: name });
const examParams = (params: Record<string, unknown> = {}) =>
  ask('exam_params', 'approval', {
    params: {
      question_count: 10,
      types: ['choice', 'fill_blank', 'short_answer'],
      difficulty: 'adaptive',
      time_limit_min: 35,
      concepts: ['arrays', 'trees'],
      ...params,
    },
  });
const routing = () => ask('post_exam_routing', 'approval', { options: ['whatever the model offers'] });
const stopHere = 'Stop here';
const coachRoute = '→ memory-comprehension-coach (consolidate weak areas)';
const reply = (...content: ScriptedBlock[]) => ({ content });

function listAllJson(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listAllJson(full);
    return entry.name.endsWith('.json') ? [full] : [];
  });
}

/** A tool that needs approval, granted at the root of every turn of this worker (with calculator). */
const postNote = defineTool({
  name: 'post_note',
  description: 'Post a note.',
  category: 'ops',
  input: Type.Object({ text: Type.String() }, { additionalProperties: false }),
  idempotent: false,
  needsApproval: true,
  run: ({ text }) => `posted ${text}`,
});

describe('replaying recorded histories', () => {
  const harness = useWorkerHarness('replay', {
    deps: () => ({ tools: [postNote], rootGrants: ['calculator', 'post_note'] }),
  });
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;
  let client: Client;
  /** This test's histories; and, when recording, every test's that replayed cleanly, by test. */
  let recorded: Recorded[] = [];
  const replayedSets: Recorded[][] = [];
  const recordingTests = 5;
  const stillRunning: WorkflowHandle[] = [];

  beforeAll(() => {
    ({ env, fake, taskQueue } = harness);
    client = env.client;
  });
  beforeEach(() => {
    recorded = [];
  });
  // Through the harness's connection, so before the harness closes it.
  harness.closeFirst(async () => {
    for (const handle of stillRunning) await handle.terminate('replay test done').catch(() => undefined);
  });
  afterAll(async () => {
    if (!recording) return;
    if (replayedSets.length !== recordingTests)
      throw new Error(
        `Only ${replayedSets.length} of ${recordingTests} recording tests replayed cleanly: nothing written.`,
      );
    await writeFixtures(replayedSets.flat());
  });

  /** This test kept exactly the named histories (in order), and each replays against the current code. */
  async function replaysCleanly(names: string[]): Promise<void> {
    expect(recorded.map((entry) => entry.name)).toEqual(names);
    expect(
      await replayFailures(recorded.map(({ name, history }) => ({ workflowId: `fresh:${name}`, history }))),
    ).toEqual([]);
    replayedSets.push(recorded);
  }

  /** Keeps the history as it stands now: a finished workflow's whole history, or a waiting one's history so far. */
  const keep = async (name: string, handle: WorkflowHandle, runId?: string) => {
    const exact = runId ? client.workflow.getHandle(handle.workflowId, runId) : handle;
    const entry: Recorded = { name, workflowId: handle.workflowId, history: await exact.fetchHistory() };
    if (recording) {
      const args = [
        'workflow',
        'show',
        '--address',
        env.address,
        '--workflow-id',
        handle.workflowId,
        ...(runId ? ['--run-id', runId] : []),
        '--output',
        'json',
      ];
      entry.json = (await run(process.env.SKILLFLOW_TEST_TEMPORAL_CLI!, args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
    }
    recorded.push(entry);
  };
  const keepFinished = async (name: string, handle: WorkflowHandle) => {
    await handle.result().catch(() => undefined);
    await keep(name, handle);
  };

  /** Waits until the turn waits at the named checkpoint and its history says so (the search attribute is recorded). */
  async function waitingAt(handle: WorkflowHandle, name: string, afterId?: string): Promise<PendingCheckpoint> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const state = await handle.query(turnStateQuery).catch(() => null);
      const pending = state?.pendingCheckpoint;
      if (pending && pending.name === name && pending.id !== afterId) {
        const attributes = (await handle.describe()).searchAttributes;
        if (attributes.SkillflowCheckpoint?.[0] === name && attributes.SkillflowStatus?.[0] === 'waiting')
          return pending;
      }
      if (state && ['completed', 'failed', 'cancelled'].includes(state.status))
        throw new Error(`${handle.workflowId} ended (${state.status}) before ${name}`);
      if (Date.now() > deadline) throw new Error(`${handle.workflowId} never waited at ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const decide = (handle: WorkflowHandle, checkpointId: string, decision: Record<string, unknown>) =>
    handle.executeUpdate(answerCheckpointUpdate, { args: [{ checkpointId, by: 'tester', ...decision } as never] });

  async function newSession(): Promise<WorkflowHandle<typeof sessionWorkflow>> {
    const sessionId = `replay${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    return client.workflow.start<typeof sessionWorkflow>(workflowTypes.session, {
      workflowId: `session-${sessionId}`,
      taskQueue,
      args: [
        {
          sessionId,
          userId: 'tester',
          createdAt: new Date().toISOString(),
          settings: { ...defaultTurnSettings, modelRetryInitialMs: 100 },
        },
      ],
    });
  }
  const send = async (session: WorkflowHandle, message: string) =>
    client.workflow.getHandle((await session.executeUpdate(startTurnUpdate, { args: [{ message }] })).turnId);
  /** Waits until the session has recorded the end of its turn `turnId` (and so holds whatever plan it carried). */
  async function sessionRecorded(session: WorkflowHandle, turnId: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const state = await session.query(sessionStateQuery);
      if (state.turns.find((turn) => turn.id === turnId)?.endedAt && !state.activeTurnId) return;
      if (Date.now() > deadline) throw new Error(`session never recorded the end of ${turnId}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('records turns that use every path: tools, checkpoints, plans, cancellation, errors, sessions', async () => {
    fake.enqueue({ content: [text('plain answer')] });
    await keepFinished('plain-answer', await startTurn(client, taskQueue, 'hello'));

    fake.enqueue(
      { content: [toolUse('load_skill', { name: 'exam-mode-tuner' })] },
      {
        content: [
          toolUse('request_human_approval', {
            checkpoint: 'exam_params',
            summary: 's',
            kind: 'approval',
            params: { question_count: 1, time_limit_min: 5, concepts: ['arrays'] },
          }),
        ],
      },
      { content: [toolUse('load_subskill', { skill: 'exam-mode-tuner', subskill: 'question-generation' })] },
      { content: [text('early answer')] },
      {
        content: [
          toolUse('request_human_approval', { checkpoint: 'question_1', summary: 'q', kind: 'question' }),
          toolUse('no_such_tool', {}),
        ],
      },
      { content: [text('stopping here')] },
    );
    const examTurn = await startTurn(client, taskQueue, 'exam');
    const params = await answerNext(examTurn, { action: 'modify', overrides: { question_count: 2 } });
    await answerNext(examTurn, { action: 'cancel' }, params.id);
    await keepFinished('exam-modified-then-cancelled', examTurn);

    fake.enqueue(
      { error: { status: 529, type: 'overloaded_error', message: 'busy' } },
      { content: [text('after a retry')], stopReason: 'max_tokens' },
      { content: [text(' and more')] },
    );
    await keepFinished('retry-and-continuation', await startTurn(client, taskQueue, 'retry'));

    fake.enqueue({ content: [text('slow '.repeat(50))], delayMs: 300 });
    const cancelled = await startTurn(client, taskQueue, 'cancel me');
    const before = fake.requests.length;
    while (fake.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 50));
    await cancelled.cancel();
    await keepFinished('cancelled-during-model-call', cancelled);

    const session = await newSession();
    fake.enqueue({ content: [text('first')] }, { content: [text('second')] });
    for (const [index, message] of ['one', 'two'].entries()) {
      await keepFinished(`session-turn-${index + 1}`, await send(session, message));
    }
    await session.terminate('replay test done');
    await keep('session-two-turns', session);
    await replaysCleanly([
      'plain-answer',
      'exam-modified-then-cancelled',
      'retry-and-continuation',
      'cancelled-during-model-call',
      'session-turn-1',
      'session-turn-2',
      'session-two-turns',
    ]);
  });

  it('records turns in flight: waiting at checkpoints, plans and routes carried into the next turn, continue-as-new', async () => {
    // An exam waiting for its parameters to be approved.
    fake.enqueue(reply(loadSkill()), reply(text('Here is the exam I propose.'), examParams()));
    const atParams = await startTurn(client, taskQueue, 'Give me a practice test on data structures.');
    stillRunning.push(atParams);
    await waitingAt(atParams, 'exam_params');
    await keep('exam-waiting-at-params', atParams);

    // An exam waiting at its second question, after the steps before it.
    fake.enqueue(
      reply(loadSkill()),
      reply(examParams({ question_count: 2 })),
      reply(subskill('question-generation')),
      reply(text('Question 1: what is an array?'), ask('question_1', 'question', { params: { number: 1 } })),
      reply(subskill('adaptive-difficulty')),
      reply(text('Question 2: what is a tree?'), ask('question_2', 'question', { params: { number: 2 } })),
    );
    const atQuestion = await startTurn(client, taskQueue, 'exam me');
    stillRunning.push(atQuestion);
    const paramsCp = await waitingAt(atQuestion, 'exam_params');
    await decide(atQuestion, paramsCp.id, { action: 'approve' });
    const q1 = await waitingAt(atQuestion, 'question_1');
    await decide(atQuestion, q1.id, { action: 'answer', answer: 'A contiguous block.' });
    await waitingAt(atQuestion, 'question_2');
    await keep('exam-waiting-at-question', atQuestion);

    // Routed to the coach in the same turn; the coach's plan waits at its first checkpoint.
    fake.enqueue(
      reply(loadSkill()),
      reply(examParams({ question_count: 1 })),
      reply(subskill('question-generation')),
      reply(subskill('adaptive-difficulty')),
      reply(subskill('performance-analytics')),
      reply(routing()),
      reply(loadSkill('memory-comprehension-coach')),
      reply(ask('focus_areas', 'approval', { params: { concepts: ['trees'], session_minutes: 20, depth: 'deep' } })),
    );
    const routed = await startTurn(client, taskQueue, 'exam then coach');
    stillRunning.push(routed);
    const routedParams = await waitingAt(routed, 'exam_params');
    await decide(routed, routedParams.id, { action: 'approve' });
    const route = await waitingAt(routed, 'post_exam_routing');
    await decide(routed, route.id, { action: 'choose', choice: coachRoute });
    await waitingAt(routed, 'focus_areas');
    await keep('exam-routed-to-coach-waiting', routed);

    // A session: an exam answered "Stop here", then a new request in the next turn (which carries the route).
    const stopSession = await newSession();
    fake.enqueue(
      reply(loadSkill()),
      reply(examParams({ question_count: 1 })),
      reply(subskill('question-generation')),
      reply(ask('question_1', 'question')),
      reply(subskill('adaptive-difficulty')),
      reply(subskill('performance-analytics')),
      reply(toolUse('submit_output', { output: examOutput(1) })),
      reply(text('You scored 100%.'), routing()),
      reply(text('Well done. Come back any time.')),
    );
    const stopExam = await send(stopSession, 'Give me a practice test on trees.');
    const stopParams = await waitingAt(stopExam, 'exam_params');
    await decide(stopExam, stopParams.id, { action: 'approve' });
    const stopQ1 = await waitingAt(stopExam, 'question_1');
    await decide(stopExam, stopQ1.id, { action: 'answer', answer: 'A tree has no cycles.' });
    const stopRoute = await waitingAt(stopExam, 'post_exam_routing');
    await decide(stopExam, stopRoute.id, { action: 'choose', choice: stopHere });
    await keepFinished('exam-routing-answered-stop', stopExam);
    await sessionRecorded(stopSession, stopExam.workflowId);
    fake.enqueue(
      reply(loadSkill('simple-writing')),
      reply(text('Autumn leaves falling / quietly the pond listens / a frog breaks the calm')),
    );
    await keepFinished('turn-after-stop-here', await send(stopSession, 'Write me a haiku about autumn.'));
    await stopSession.terminate('replay test done');
    await keep('session-exam-stopped-then-new-request', stopSession);

    // A session whose exam is cancelled mid-way: the plan is carried into the next turns and across continue-as-new.
    const carrySession = await newSession();
    const firstRunId = (await carrySession.describe()).runId;
    fake.enqueue(
      reply(loadSkill()),
      reply(examParams({ question_count: 5 })),
      reply(subskill('question-generation')),
      reply(ask('question_1', 'question')),
    );
    const interrupted = await send(carrySession, 'exam on graphs');
    const carryParams = await waitingAt(interrupted, 'exam_params');
    await decide(interrupted, carryParams.id, { action: 'approve' });
    await waitingAt(interrupted, 'question_1');
    await interrupted.cancel();
    await keepFinished('exam-cancelled-with-plan', interrupted);
    await sessionRecorded(carrySession, interrupted.workflowId);

    fake.enqueue(reply(loadSkill()), reply(text('Question 1 again: what is a graph?'), ask('question_1', 'question')));
    const resumed = await send(carrySession, 'continue my exam');
    await waitingAt(resumed, 'question_1');
    await keep('turn-resuming-carried-plan-waiting', resumed);
    await resumed.cancel();
    await resumed.result().catch(() => undefined);
    await sessionRecorded(carrySession, resumed.workflowId);

    let number = 2;
    while ((await carrySession.describe()).runId === firstRunId) {
      if (number > 12) throw new Error('the session never continued as new');
      number++;
      fake.enqueue(reply(ask(`question_${number}`, 'question')));
      const turn = await send(carrySession, `turn ${number}`);
      await waitingAt(turn, `question_${number}`);
      await turn.cancel();
      await turn.result().catch(() => undefined);
      await sessionRecorded(carrySession, turn.workflowId);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await keep('session-run-ending-in-continue-as-new', carrySession, firstRunId);

    fake.enqueue(reply(loadSkill()), reply(ask('question_2', 'question')));
    const afterContinue = await send(carrySession, 'and now?');
    stillRunning.push(afterContinue, carrySession);
    await waitingAt(afterContinue, 'question_2');
    await keep('turn-after-continue-as-new-waiting', afterContinue);
    await keep('session-continued-with-plan', carrySession);
    await replaysCleanly([
      'exam-waiting-at-params',
      'exam-waiting-at-question',
      'exam-routed-to-coach-waiting',
      'exam-routing-answered-stop',
      'turn-after-stop-here',
      'session-exam-stopped-then-new-request',
      'exam-cancelled-with-plan',
      'turn-resuming-carried-plan-waiting',
      'session-run-ending-in-continue-as-new',
      'turn-after-continue-as-new-waiting',
      'session-continued-with-plan',
    ]);
  });

  it('records turns with registered tools: a skill using one, approvals answered and one waiting', async () => {
    fake.enqueue(
      reply(loadSkill('figure-check')),
      reply(toolUse('calculator', { expression: '250 * 1.0842' })),
      reply(toolUse('calculator', { expression: '250 *' }), toolUse('http_fetch', { url: 'https://example.com/' })),
      reply(text('250 EUR is 271.05 USD.')),
    );
    await keepFinished('tool-calculator-in-skill', await startTurn(client, taskQueue, 'How much is 250 EUR in USD?'));

    fake.enqueue(
      reply(toolUse('post_note', { text: 'first' })),
      reply(toolUse('post_note', { text: 'second' })),
      reply(toolUse('post_note', { text: 'third' })),
      reply(text('Two posted.')),
    );
    const approvals = await startTurn(client, taskQueue, 'post three notes');
    const first = await waitingAt(approvals, 'tool:post_note');
    await decide(approvals, first.id, { action: 'approve' });
    const second = await waitingAt(approvals, 'tool:post_note', first.id);
    await decide(approvals, second.id, { action: 'modify', overrides: { text: 'second, edited' } });
    const third = await waitingAt(approvals, 'tool:post_note', second.id);
    await decide(approvals, third.id, { action: 'cancel' });
    await keepFinished('tool-approvals-answered', approvals);

    fake.enqueue(reply(text('Posting it.'), toolUse('post_note', { text: 'waiting' })));
    const waiting = await startTurn(client, taskQueue, 'post a note');
    stillRunning.push(waiting);
    await waitingAt(waiting, 'tool:post_note');
    await keep('tool-approval-waiting', waiting);
    await replaysCleanly(['tool-calculator-in-skill', 'tool-approvals-answered', 'tool-approval-waiting']);
  });

  it("records turns with skill runs: nested runs that finished, and a turn waiting at its skill run's checkpoint", async () => {
    const planning = 'task-planning';
    const planOutput = {
      goal: 'Launch by June',
      milestones: ['beta'],
      steps: [{ id: 's1', title: 'Build' }],
      critical_path: ['s1'],
      risks: [],
    };
    const writeUp = { title: 'The plan', content: 'We launch in June.', word_count: 4, placeholders: [] };
    const invoke = (skill: string, task: string, params: Record<string, unknown>) =>
      toolUse('invoke_skill', { skill, task, params });
    const skillRuns = async (turn: WorkflowHandle) => (await turn.query(turnStateQuery)).skills ?? [];

    // A turn invokes task-planning, whose plan passes its review checkpoint and which invokes simple-writing (depth 2).
    fake.enqueue(
      reply(text('Planning it.'), invoke(planning, 'Plan the launch.', { goal: 'Launch the app by June' })),
      reply(subskill('decompose', planning)),
      reply(subskill('estimate', planning)),
      reply(ask('plan_review', 'approval', { params: { steps: 1, total_hours: 10, deadline_holds: true } })),
      reply(invoke('simple-writing', 'Announce the plan to the team.', { topic: 'launch in June', type: 'email' })),
      reply(text(JSON.stringify(writeUp))),
      reply(text(JSON.stringify(planOutput))),
      reply(text('Here is the plan, and the email to the team.')),
    );
    const nested = await startTurn(client, taskQueue, 'Plan our launch and write the team an email.');
    const review = await waitingAt(nested, 'plan_review');
    await decide(nested, review.id, { action: 'approve' });
    await keepFinished('turn-with-nested-skill-runs', nested);
    const [planRun, writingRun] = await skillRuns(nested);
    await keepFinished('skill-run-task-planning', client.workflow.getHandle(planRun.workflowId));
    await keepFinished('skill-run-simple-writing-depth-2', client.workflow.getHandle(writingRun.workflowId));

    // A turn waits at the review checkpoint of the task-planning it invoked.
    fake.enqueue(
      reply(invoke(planning, 'Plan the move.', { goal: 'Move the office' })),
      reply(subskill('decompose', planning)),
      reply(subskill('estimate', planning)),
      reply(
        text('Please review.'),
        ask('plan_review', 'approval', { params: { steps: 3, total_hours: 40, deadline_holds: false } }),
      ),
    );
    const waiting = await startTurn(client, taskQueue, 'Plan the office move.');
    stillRunning.push(waiting);
    await waitingAt(waiting, 'plan_review');
    const [waitingRun] = await skillRuns(waiting);
    await keep('turn-waiting-at-skill-run-checkpoint', waiting);
    await keep('skill-run-waiting-at-checkpoint', client.workflow.getHandle(waitingRun.workflowId));
    await replaysCleanly([
      'turn-with-nested-skill-runs',
      'skill-run-task-planning',
      'skill-run-simple-writing-depth-2',
      'turn-waiting-at-skill-run-checkpoint',
      'skill-run-waiting-at-checkpoint',
    ]);
  });

  it('records turns ended by a timer, a signal, a superseding message and the plan policy', async () => {
    // A checkpoint whose deadline passes: its timer fires, nobody answered, the model is told so and goes on.
    fake.enqueue(
      reply(text('Shall I go on?'), ask('go_on', 'approval')),
      reply(text('Nobody answered; I stopped there.')),
    );
    const expiring = await startTurn(client, taskQueue, 'ask me and wait', {
      settings: { checkpointTtlMs: 300, checkpointOnTimeout: 'skip' },
    });
    await keepFinished('checkpoint-expired-skipped', expiring);
    expect(
      ((await expiring.query(turnEventsQuery, 0)) as Array<{ type: string }>).map((event) => event.type),
    ).toContain('checkpoint.expired');

    // A decision sent as a signal (as operators do from the UI or CLI), not through the update.
    fake.enqueue(reply(ask('go_on', 'approval')), reply(text('Approved, going on.')));
    const signalled = await startTurn(client, taskQueue, 'ask me');
    const pending = await waitingAt(signalled, 'go_on');
    await signalled.signal(checkpointDecisionSignal, { checkpointId: pending.id, action: 'approve', by: 'operator' });
    await keepFinished('checkpoint-answered-by-signal', signalled);
    expect(await signalled.query(turnStateQuery)).toMatchObject({ status: 'completed', output: 'Approved, going on.' });

    // A turn waiting at a checkpoint, superseded by the session's next message (which cancels it first).
    const session = await newSession();
    fake.enqueue(reply(ask('go_on', 'approval')), reply(text('The new request, answered.')));
    const superseded = await send(session, 'ask me');
    await waitingAt(superseded, 'go_on');
    const superseding = client.workflow.getHandle(
      (await session.executeUpdate(startTurnUpdate, { args: [{ message: 'never mind', supersede: true }] })).turnId,
    );
    await keepFinished('turn-superseded', superseded);
    await keepFinished('turn-superseding', superseding);
    await sessionRecorded(session, superseding.workflowId);
    await session.terminate('replay test done');
    await keep('session-with-superseded-turn', session);
    expect((await session.query(sessionStateQuery)).turns.map((turn) => turn.status)).toEqual([
      'cancelled',
      'completed',
    ]);

    // A turn the plan policy stops: the model claims to be done twice before the exam's plan is complete.
    const failingSession = await newSession();
    fake.enqueue(
      reply(loadSkill()),
      reply(text('Done!')),
      reply(text('Really done!')),
      reply(text('Still done!')),
      reply(text('Done again!')),
      reply(text('Done, truly!')),
    );
    const failing = await send(failingSession, 'exam');
    await keepFinished('turn-failed-plan-violations', failing);
    await sessionRecorded(failingSession, failing.workflowId);
    await failingSession.terminate('replay test done');
    await keep('session-with-failed-turn', failingSession);
    expect((await failingSession.query(sessionStateQuery)).turns[0]).toMatchObject({
      status: 'failed',
      reason: 'plan_violations',
    });
    await replaysCleanly([
      'checkpoint-expired-skipped',
      'checkpoint-answered-by-signal',
      'turn-superseded',
      'turn-superseding',
      'session-with-superseded-turn',
      'turn-failed-plan-violations',
      'session-with-failed-turn',
    ]);
  });

  it('replays every committed history without a determinism error, and they cover what can break', async () => {
    const committed = listAllJson(fixturesDir).map((file) => ({
      workflowId: path.relative(fixturesDir, file),
      history: JSON.parse(fs.readFileSync(file, 'utf8')),
    }));
    const scenarios = new Set(committed.map(({ workflowId }) => path.basename(workflowId, '.json')));
    expect([...gateScenarios].filter((name) => !scenarios.has(name))).toEqual([]);
    expect(await replayFailures(committed)).toEqual([]);
  });

  it('refuses a history that the current code would not make (a model call renamed in it)', async () => {
    const file = path.join(fixturesDir, '346c5dc', 'plain-answer.json');
    const history = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      events: Array<Record<string, { activityType?: { name: string } }>>;
    };
    const scheduled = history.events
      .map((event) => event.activityTaskScheduledEventAttributes)
      .filter((attributes) => attributes?.activityType?.name === 'callModel');
    expect(scheduled.length).toBeGreaterThan(0);
    scheduled[0].activityType!.name = 'callSomethingElse';
    const failures = await replayFailures([{ workflowId: 'mutated:plain-answer', history }]);
    expect(failures).toEqual([expect.stringMatching(/^mutated:plain-answer: DeterminismViolationError: /)]);
  });
});

/**
 * The scenarios the committed fixtures must hold between them: each is a way a change can break a turn in flight
 * (docs/operators.md, "Changing workflow code").
 */
const gateScenarios = [
  'checkpoint-expired-skipped',
  'checkpoint-answered-by-signal',
  'turn-superseded',
  'session-run-ending-in-continue-as-new',
  'retry-and-continuation',
  'cancelled-during-model-call',
  'exam-cancelled-with-plan',
  'turn-with-nested-skill-runs',
  'turn-waiting-at-skill-run-checkpoint',
  'turn-failed-plan-violations',
];

/** Replays the histories against the bundled workflow code: one line per history that fails, with the error's name. */
async function replayFailures(histories: Array<{ workflowId: string; history: unknown }>): Promise<string[]> {
  const failures: string[] = [];
  const sinks = {
    live: {
      logAppended: { fn: () => undefined, callDuringReplay: false },
      eventLogged: { fn: () => undefined, callDuringReplay: false },
    },
  };
  const options = { workflowBundle: { codePath: process.env.SKILLFLOW_TEST_WORKFLOW_BUNDLE! }, sinks };
  for await (const result of Worker.runReplayHistories(options, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message}`);
  }
  return failures;
}

/** Writes this run's histories under the commit of the workflow code that made them; never over existing ones. */
async function writeFixtures(recorded: Recorded[]): Promise<void> {
  const root = path.resolve(__dirname, '..');
  const git = async (...args: string[]) => (await run('git', args, { cwd: root })).stdout.trim();
  if ((await git('status', '--porcelain', '--', 'workflows', 'core')) !== '') {
    throw new Error('Commit the workflow code first: fixtures are named after the commit that recorded them.');
  }
  const dir = path.join(fixturesDir, await git('rev-parse', '--short', 'HEAD'));
  if (fs.existsSync(dir)) throw new Error(`${path.relative(root, dir)} exists: fixtures are never re-recorded.`);
  fs.mkdirSync(dir, { recursive: true });
  for (const { name, json } of recorded) fs.writeFileSync(path.join(dir, `${name}.json`), json!);
}
