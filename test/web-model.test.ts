import type { LoggedEvent, StreamEvent } from '../lib/client';
import { emptyTurn, itemsOf, pendingCheckpoint, withEvent, type TurnState } from '../web/src/conversation/model';
import { clock, countLabel, planPosition } from '../web/src/conversation/position';
import { changedValues, draftsOf, fieldOfPath, valuesOf } from '../web/src/forms/drafts';
import { conceptScores, examReportOf } from '../web/src/report/exam';

/** The web app's pure parts (web/src): what the page makes of a turn's events, of a schema's form, of a report. */
const at = '2026-01-01T10:00:00.000Z';
let offset = 0;
const logged = (event: Record<string, unknown>): LoggedEvent => ({ ...event, offset: ++offset, at }) as LoggedEvent;
const fold = (events: StreamEvent[], from: TurnState = emptyTurn) => events.reduce(withEvent, from);

const examParams = {
  id: 'cp-1',
  name: 'exam_params',
  kind: 'approval',
  summary: 'Ten questions?',
  params: { question_count: 10, time_limit_min: 35 },
  paramsSchema: {
    type: 'object',
    properties: {
      question_count: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
      types: { type: 'array', items: { type: 'string', enum: ['choice', 'essay'] }, default: ['choice'] },
      difficulty: { type: 'string', enum: ['adaptive', 'hard'], default: 'adaptive' },
      concepts: { type: 'array', items: { type: 'string' } },
      time_limit_min: { type: 'integer', minimum: 1, maximum: 240 },
    },
    additionalProperties: false,
  },
  options: null,
  actions: ['approve', 'modify', 'cancel'],
  requestedAt: at,
  expiresAt: null,
} as const;

const question = (n: number) => ({
  ...examParams,
  id: `cp-${n + 1}`,
  name: `question_${n}`,
  kind: 'question' as const,
  params: null,
  paramsSchema: null,
  actions: ['answer', 'cancel'],
});

function examEvents(): LoggedEvent[] {
  offset = 0;
  return [
    logged({ type: 'status', status: 'running' }),
    logged({ type: 'message', text: 'Loading.' }),
    logged({ type: 'tool.start', name: 'load_skill', args: {}, callId: 't1' }),
    logged({ type: 'step', skill: 'exam-mode-tuner', step: null, remaining: ['checkpoint:exam_params', 'x'] }),
    logged({ type: 'tool.end', name: 'load_skill', result: {}, callId: 't1', isError: false }),
    logged({ type: 'tool.start', name: 'request_human_approval', args: {}, callId: 't2' }),
    logged({ type: 'checkpoint.requested', checkpoint: examParams }),
    logged({ type: 'checkpoint.resolved', checkpointId: 'cp-1', action: 'modify', by: 'alice' }),
    logged({
      type: 'tool.end',
      name: 'request_human_approval',
      result: { approved: true, overrides: { question_count: 3, time_limit_min: 30 } },
      callId: 't2',
      isError: false,
    }),
    logged({ type: 'tool.start', name: 'request_human_approval', args: {}, callId: 't3' }),
    logged({ type: 'checkpoint.requested', checkpoint: question(2) }),
  ];
}

describe("the page's turn state", () => {
  it('holds each durable event once, in offset order, whatever a resumed stream sends again', () => {
    const events = examEvents();
    const state = fold([...events.slice(0, 5), ...events.slice(2, 8), ...events]);
    expect(state.events.map((event) => event.offset)).toEqual(events.map((event) => event.offset));
  });

  it('shows live text as it streams, drops it on message.reset and a new attempt, and replaces it by the message', () => {
    const delta = (text: string, attempt = 1) => ({ type: 'message.delta', text, call: 'c1', attempt }) as StreamEvent;
    let state = fold([delta('Hel'), delta('lo')]);
    expect(itemsOf(state).at(-1)).toMatchObject({ kind: 'message', text: 'Hello', streaming: true });
    state = fold([delta('Hi', 2)], state);
    expect(state.live?.text).toBe('Hi');
    state = fold([{ type: 'message.reset', call: 'c1', attempt: 3 } as StreamEvent], state);
    expect(state.live).toBeNull();
    offset = 0;
    state = fold([delta('Whole'), logged({ type: 'message', text: 'Whole answer.' })], state);
    expect(itemsOf(state)).toEqual([{ kind: 'message', key: 'm1', text: 'Whole answer.', streaming: false }]);
  });

  it('folds tool calls, leaves checkpoints out of them, and knows what the turn waits at', () => {
    const state = fold(examEvents());
    const items = itemsOf(state);
    expect(items.map((item) => item.kind)).toEqual(['message', 'tools', 'checkpoint', 'checkpoint']);
    expect(items[1]).toMatchObject({ calls: [{ name: 'load_skill', end: { isError: false } }] });
    expect(items[2]).toMatchObject({
      outcome: { kind: 'resolved', action: 'modify', by: 'alice' },
      result: { approved: true, overrides: { question_count: 3 } },
    });
    expect(pendingCheckpoint(state)?.name).toBe('question_2');
    expect(pendingCheckpoint(fold([logged({ type: 'done', output: 'x' })], state))).toBeUndefined();
  });

  it("says where the plan is: the step, 'question 2 of 3' with the approved overrides, the time limit from approval", () => {
    const position = planPosition(examEvents());
    expect(position).toMatchObject({
      skill: 'exam-mode-tuner',
      step: null,
      remaining: ['checkpoint:exam_params', 'x'],
    });
    expect(countLabel(position)).toBe('question 2 of 3');
    expect(position.endsAt).toBe(Date.parse(at) + 30 * 60_000);
    expect(countLabel(planPosition(examEvents().slice(0, 7)))).toBeNull();
  });

  it.each([
    [0, '0:00'],
    [9_001, '0:10'],
    [245_000, '4:05'],
    [3_909_000, '1:05:09'],
    [-5_000, '0:00'],
  ])('clock(%i) is %s', (ms, shown) => expect(clock(ms)).toBe(shown));
});

describe('forms from a JSON Schema', () => {
  const schema = examParams.paramsSchema;

  it('fills the proposed values, else the defaults, and gives back typed values', () => {
    const drafts = draftsOf(schema, examParams.params);
    expect(drafts).toEqual({
      question_count: '10',
      types: ['choice'],
      difficulty: 'adaptive',
      concepts: '',
      time_limit_min: '35',
    });
    expect(valuesOf(schema, { ...drafts, concepts: 'arrays, linked lists ,', types: ['essay'] })).toEqual({
      question_count: 10,
      types: ['essay'],
      difficulty: 'adaptive',
      concepts: ['arrays', 'linked lists'],
      time_limit_min: 35,
    });
  });

  it('sends what does not parse as typed, for the API to name, and only what changed as overrides', () => {
    const drafts = draftsOf(schema, examParams.params);
    expect(valuesOf(schema, { ...drafts, question_count: 'many' }).question_count).toBe('many');
    expect(changedValues(schema, { ...drafts, question_count: '500' }, examParams.params)).toEqual({
      question_count: 500,
      types: ['choice'],
      difficulty: 'adaptive',
    });
    expect(
      changedValues(
        schema,
        { ...drafts, question_count: '500' },
        { ...examParams.params, types: ['choice'], difficulty: 'adaptive' },
      ),
    ).toEqual({ question_count: 500 });
  });

  it.each([
    ['overrides.question_count', 'question_count'],
    ['params.types[0]', 'types'],
    ['topic', 'topic'],
    ['note', 'note'],
  ])('puts the problem at %s on the field %s', (path, field) => expect(fieldOfPath(path)).toBe(field));
});

describe("the exam's report", () => {
  it('reads the artifact and scores each concept as performance-analytics grades mastery', () => {
    const report = examReportOf({
      score_percent: 58,
      results: [
        { number: 1, concept: 'arrays', result: 'correct', points: 1 },
        { number: 2, concept: 'trees', result: 'partial', points: 0.5 },
        { number: 3, concept: 'arrays', result: 'incorrect', points: 0 },
        { number: 4, concept: 'trees', result: 'surprise', points: 'x' },
        'not a result',
      ],
      weak_areas: ['trees', 7],
      recommendation: 'study-guide-creator',
    });
    expect(report).toMatchObject({ scorePercent: 58, weakAreas: ['trees'], recommendation: 'study-guide-creator' });
    expect(report!.results.map((result) => result.result)).toEqual(['correct', 'partial', 'incorrect', 'unanswered']);
    expect(conceptScores(report!.results)).toEqual([
      { concept: 'arrays', points: 1, questions: 2, percent: 50, mastery: 'developing' },
      { concept: 'trees', points: 0.5, questions: 2, percent: 25, mastery: 'weak' },
    ]);
    expect(examReportOf({ summary: 'not an exam' })).toBeNull();
  });
});
