import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  decisionProblems,
  pendingCheckpointOf,
  type CheckpointDecision,
  type PendingCheckpoint,
} from '../core/checkpoints';
import {
  allowedNow,
  answerAheadOf,
  answerAheadOutcome,
  carryOf,
  checkpointRefusal,
  describeAllowed,
  readPlanCarry,
  unresolvedSkills,
  withSnapshots,
  newPolicyState,
  passCheckpoint,
  passDeadline,
  pinnedSkillsOf,
  policySettingsOf,
  positionOf,
  protectedToolUseIds,
  reducePolicy,
  remainingSteps,
  resumeNote,
  startSkillPlan,
  stepRefusal,
  takeStep,
  mayInvoke,
  toolsInScope,
  registeredToolsInScope,
  undetailedToolsInScope,
  type ActivePlan,
  type PlanCarry,
  type PolicyEvent,
  type PolicySettings,
  type PolicyState,
  type Verdict,
} from '../core/policy';
import {
  planSpecOf,
  type CheckpointSpec,
  type FieldSpec,
  type SkillManifest,
  type SkillSnapshot,
} from '../core/skills';
import { headerOf, type ToolCatalog, type ToolSpec } from '../core/tools';
import type { Reservation } from '../core/budget';
import { legacyWorkflowTypes } from '../workflows/definitions';

/**
 * The turn policy (core/policy) as a table: a state built from events, one more event, and the verdict and state it
 * must give. `npm run test:policy-coverage` checks that these tests cover every branch of core/policy/.
 */

const t0 = 1_000_000;
const settings: PolicySettings = {
  maxRounds: 5,
  maxPlanViolations: 3,
  checkpointTtlMs: null,
  checkpointOnTimeout: 'cancel',
  maxSkillDepth: 2,
  maxInvocationsPerResponse: 2,
  maxInvocationsPerTurn: 3,
};
const field = (name: string, spec: Partial<FieldSpec> & Pick<FieldSpec, 'type'>): FieldSpec => ({
  name,
  description: name,
  required: true,
  ...spec,
});
const checkpoint = (name: string, spec: Partial<CheckpointSpec> = {}): CheckpointSpec => ({
  name,
  kind: 'approval',
  ttlMs: null,
  onTimeout: 'cancel',
  params: [],
  routes: [],
  inPlan: true,
  ...spec,
});

function skill(name: string, plan: string | null, extra: Partial<SkillManifest> = {}): SkillManifest {
  return {
    name,
    description: `${name} skill`,
    license: null,
    compatibility: null,
    allowedTools: null,
    metadata: {},
    category: null,
    tags: [],
    version: null,
    enabled: true,
    plan: plan ? planSpecOf(plan) : null,
    parameters: [],
    output: [],
    checkpoints: [],
    freeCheckpoints: null,
    deadlines: [],
    stepLimits: [],
    limits: { maxIterations: null, timeoutMs: null },
    children: [],
    tools: null,
    subskills: [],
    resources: [],
    ...extra,
  };
}

/** A small exam: params with a deadline, questions as free checkpoints, a step limit, routing, limits. */
const exam = skill('exam', 'checkpoint:setup ask grade+ report checkpoint:route', {
  checkpoints: [
    checkpoint('setup', {
      ttlMs: 60_000,
      params: [
        field('count', { type: 'integer', minimum: 1, maximum: 50, default: 10, required: false }),
        field('minutes', { type: 'integer', minimum: 1, maximum: 240, default: 30, required: false }),
        field('topics', { type: 'array', items: 'string' }),
      ],
    }),
    checkpoint('route', {
      ttlMs: 3_600_000,
      onTimeout: 'skip',
      routes: [
        { id: 'coach', label: '→ coach', skill: 'coach' },
        { id: 'stop', label: 'Stop here', skill: null },
      ],
    }),
  ],
  freeCheckpoints: { ttlMs: 15 * 60_000, onTimeout: 'skip' },
  deadlines: [{ source: { kind: 'param', checkpoint: 'setup', param: 'minutes', unit: 'minutes' }, jumpTo: 'report' }],
  stepLimits: [{ step: 'grade', maxRuns: 2 }],
});
const limited = skill('limited', 'a b', { limits: { maxIterations: 2, timeoutMs: null } });
const gate = skill('gate', 'checkpoint:go a');
const coach = skill('coach', 'checkpoint:focus drill', {
  checkpoints: [
    checkpoint('focus', {
      onTimeout: 'approve-defaults',
      ttlMs: 1_000,
      params: [field('depth', { type: 'string', enum: ['refresh', 'deep'], default: 'deep', required: false })],
    }),
  ],
});
/** A skill without a plan whose checkpoints, an approval without params and a question, approve when nobody answers. */
const lenient = skill('lenient', null, {
  checkpoints: [
    checkpoint('go_ahead', { inPlan: false, ttlMs: 1_000, onTimeout: 'approve-defaults' }),
    checkpoint('which', { inPlan: false, kind: 'question', ttlMs: 1_000, onTimeout: 'approve-defaults' }),
  ],
});
const writer = skill('writer', null, {
  checkpoints: [
    checkpoint('draft_ok', {
      inPlan: false,
      ttlMs: 5_000,
      onTimeout: 'skip',
      params: [field('tone', { type: 'string', enum: ['formal', 'casual'] })],
    }),
  ],
  limits: { maxIterations: null, timeoutMs: 2_000 },
});
const timed = skill('timed', 'intro work+ wrap', {
  deadlines: [{ source: { kind: 'fixed', ms: 60_000 }, jumpTo: 'wrap' }],
});
/** Registered tools: granted at the root (calc), by name, by category and by MCP server; two need approval. */
const toolSpec = (name: string, extra: Partial<ToolSpec> = {}): ToolSpec => ({
  name,
  description: `The ${name} tool.\nMore about it.`,
  category: 'data',
  inputSchema: {
    type: 'object',
    properties: { q: { type: 'string', maxLength: 10 }, n: { type: 'integer', default: 1 } },
    required: ['q'],
    additionalProperties: false,
  },
  source: 'builtin',
  runsIn: 'activity',
  idempotent: true,
  needsApproval: false,
  ...extra,
});
const registry: ToolCatalog = {
  tools: [
    toolSpec('calc'),
    toolSpec('fetch', { category: 'web' }),
    toolSpec('deploy', { category: 'ops', needsApproval: true, idempotent: false }),
    toolSpec('gh__issue', { category: 'mcp', source: 'mcp', server: 'gh', needsApproval: true }),
  ],
  rootGrants: ['calc'],
};
const researcher = skill('researcher', 'look', {
  allowedTools: 'fetch Bash(git:*)',
  tools: ['category:ops', 'mcp:gh'],
});
const snapshotOf = (manifest: SkillManifest): SkillSnapshot => ({
  name: manifest.name,
  hash: `hash-${manifest.name}`,
  manifest,
  body: 'body',
  subskills: [],
});

// Events, short.
const started = (extra: Partial<Extract<PolicyEvent, { type: 'turn.started' }>> = {}): PolicyEvent => ({
  type: 'turn.started',
  at: t0,
  settings,
  catalog: ['exam', 'coach', 'writer', 'timed'],
  ...extra,
});
let callCount = 0;
const call = (name: string, input: unknown = {}) => ({ id: `toolu_${++callCount}`, name, input });
const requested = (name: string, input: unknown = {}, at = t0): PolicyEvent => ({
  type: 'tool.requested',
  at,
  call: call(name, input),
});
const loaded = (manifest: SkillManifest, at = t0, id?: string): PolicyEvent => ({
  type: 'tool.finished',
  at,
  call: { ...call('load_skill', { name: manifest.name }), ...(id ? { id } : {}) },
  outcome: { kind: 'skill.loaded', manifest },
});
const stepped = (skillName: string, subskill: string, at = t0): PolicyEvent => ({
  type: 'tool.finished',
  at,
  call: call('load_subskill', { skill: skillName, subskill }),
  outcome: { kind: 'subskill.loaded', skill: skillName, subskill },
});
const ask = (name: string, extra: Record<string, unknown> = {}, at = t0): PolicyEvent =>
  requested('request_human_approval', { checkpoint: name, summary: `About ${name}`, kind: 'approval', ...extra }, at);
const question = (name: string, at = t0): PolicyEvent =>
  requested('request_human_approval', { checkpoint: name, summary: name, kind: 'question' }, at);
const resolved = (id: string, decision: Omit<CheckpointDecision, 'checkpointId'>, at = t0): PolicyEvent => ({
  type: 'checkpoint.resolved',
  at,
  decision: { checkpointId: id, ...decision } as CheckpointDecision,
});
const expired = (at = t0): PolicyEvent => ({ type: 'checkpoint.expired', at });
const round = (at = t0): PolicyEvent => ({ type: 'round.starting', at });
const final: PolicyEvent = { type: 'final.proposed' };

/** Applies events in order; returns the last state and every verdict. */
function apply(events: PolicyEvent[], state = newPolicyState()): { state: PolicyState; verdicts: Verdict[] } {
  const verdicts: Verdict[] = [];
  for (const event of events) {
    const reduction = reducePolicy(state, event);
    state = reduction.state;
    verdicts.push(reduction.verdict);
  }
  return { state, verdicts };
}

const examUntilQuestions = (at = t0): PolicyEvent[] => [
  started(),
  loaded(exam, at),
  ask('setup', { params: { topics: ['trees'] } }, at),
  resolved('cp-1', { action: 'approve' }, at),
  stepped('exam', 'ask', at),
];
const withTools = (extra: Partial<Extract<PolicyEvent, { type: 'turn.started' }>> = {}) =>
  started({ tools: registry, ...extra });
/** A turn that read the same catalog by reference (its headers), and the detail it reads back. */
const byReference = () =>
  started({ tools: { headers: registry.tools.map(headerOf), rootGrants: registry.rootGrants } });
const detailed = (...names: string[]): PolicyEvent => ({
  type: 'tools.detailed',
  specs: names.map((name) => registry.tools.find((spec) => spec.name === name)!),
});
const deployAsked = (): PolicyEvent[] => [withTools(), loaded(researcher), requested('deploy', { q: 'prod' })];
const examUntilRoute = (): PolicyEvent[] => [
  ...examUntilQuestions(),
  stepped('exam', 'grade'),
  stepped('exam', 'report'),
  ask('route'),
];

interface Case {
  name: string;
  given: PolicyEvent[];
  when: PolicyEvent;
  verdict: Record<string, unknown>;
  /** Keys the verdict must not have. */
  without?: string[];
  state?: Record<string, unknown>;
}

const cases: Case[] = [
  // turn.started
  {
    name: 'a fresh turn has nothing to resume',
    given: [],
    when: started(),
    verdict: { kind: 'allow' },
    state: { plan: null, route: null, active: null, catalog: ['exam', 'coach', 'writer', 'timed'] },
  },

  // round.starting: budget, limits, deadline
  {
    name: 'a round with no skill active is just counted',
    given: [started()],
    when: round(),
    verdict: { kind: 'allow' },
    state: { roundsSinceHuman: 1 },
  },
  {
    name: 'an exhausted round budget without a plan ends the turn with a last word without tools',
    given: [started(), round(), round(), round(), round(), round()],
    when: round(),
    verdict: {
      kind: 'end',
      ending: { status: 'completed', reason: 'max_rounds' },
      lastWord: { purpose: 'final answer without tools', compact: true },
    },
  },
  {
    name: 'an exhausted round budget inside a plan fails the turn and keeps the plan',
    given: [started(), loaded(timed), round(), round(), round(), round(), round()],
    when: round(),
    verdict: {
      kind: 'end',
      ending: {
        status: 'failed',
        reason: 'max_rounds',
        error: {
          code: 'max_rounds',
          message:
            "The round budget ran out in skill timed; the plan is kept for the session's next turn. Remaining: intro → work → wrap.",
        },
      },
    },
  },
  // round.starting: the user's daily token budget (issue 13.13)
  {
    name: 'a round within what was left of the daily token budget is allowed',
    given: [started({ tokenBudget: 1_000 })],
    when: { type: 'round.starting', at: t0, tokens: 999 },
    verdict: { kind: 'allow' },
    state: { tokenBudget: 1_000, roundsSinceHuman: 1 },
  },
  {
    name: 'a turn whose tokens reached what was left of the daily budget fails before its next model call',
    given: [started({ tokenBudget: 1_000 }), round()],
    when: { type: 'round.starting', at: t0, tokens: 1_050 },
    verdict: {
      kind: 'end',
      ending: {
        status: 'failed',
        reason: 'token_budget',
        error: {
          code: 'token_budget',
          message:
            "The turn used 1,050 model tokens, reaching the 1,000 left of the user's daily budget when it started (SKILLFLOW_USER_DAILY_TOKENS); it was stopped before its next model call. The budget renews at 00:00 UTC.",
        },
      },
    },
  },
  {
    name: 'inside a plan, the token budget ending keeps the plan for the next turn',
    given: [
      ...examUntilQuestions().map((event) => (event.type === 'turn.started' ? started({ tokenBudget: 10 }) : event)),
    ],
    when: { type: 'round.starting', at: t0, tokens: 10 },
    verdict: {
      kind: 'end',
      ending: {
        reason: 'token_budget',
        error: {
          message: expect.stringMatching(/The plan is kept for the session's next turn\. Remaining: grade → report/),
        },
      },
    },
  },
  {
    name: 'without a budget, tokens do not end a turn',
    given: [started()],
    when: { type: 'round.starting', at: t0, tokens: 10_000_000 },
    verdict: { kind: 'allow' },
  },
  {
    name: 'a human decision gives the round budget back',
    given: [
      started(),
      loaded(timed),
      round(),
      round(),
      round(),
      question('q1'),
      resolved('cp-1', { action: 'answer', answer: 'yes' }),
      round(),
      round(),
    ],
    when: round(),
    verdict: { kind: 'allow' },
    state: { roundsSinceHuman: 3 },
  },
  {
    name: 'limits.max-iterations: the round after the last one allowed ends the turn, the plan kept',
    given: [
      started(),
      loaded(limited),
      round(),
      question('q1'),
      resolved('cp-1', { action: 'answer', answer: 'yes' }),
      round(),
    ],
    when: round(),
    verdict: {
      kind: 'end',
      ending: {
        status: 'failed',
        reason: 'skill_limit',
        error: {
          code: 'skill_limit',
          message:
            "Skill limited reached its limit of 2 model rounds (limits.max-iterations: 2); the turn was stopped. The plan is kept for the session's next turn. Remaining: a → b.",
        },
      },
    },
  },
  {
    name: 'limits.timeout counts active time only: a long human wait does not count',
    given: [
      started(),
      loaded(writer, t0),
      round(t0 + 1_000),
      ask('draft_ok', { params: { tone: 'formal' } }, t0 + 1_500),
      resolved('cp-1', { action: 'approve' }, t0 + 3_600_000),
    ],
    when: round(t0 + 3_600_000 + 400),
    verdict: { kind: 'allow' },
    state: { usage: { writer: { rounds: 2, activeMs: 1_900 } } },
  },
  {
    name: 'limits.timeout: active time at the limit ends the turn, naming skill and limit',
    given: [started(), loaded(writer, t0), round(t0 + 1_000)],
    when: round(t0 + 2_000),
    verdict: {
      kind: 'end',
      ending: {
        status: 'failed',
        reason: 'skill_limit',
        error: {
          code: 'skill_limit',
          message:
            'Skill writer reached its limit of 2s of active time (limits.timeout: 2s; time waiting for a human does not count); the turn was stopped.',
        },
      },
    },
  },
  {
    name: 'a plan deadline that passed moves the plan and tells the model',
    given: [...examUntilQuestions(t0)],
    when: round(t0 + 30 * 60_000),
    verdict: {
      kind: 'allow',
      note: 'The time limit of exam has passed. Ask no more questions; go straight to step report (load_subskill with skill "exam" and subskill "report").',
    },
    state: { plan: { deadlinePassed: true } },
  },
  {
    name: 'a plan whose deadline is still ahead says nothing',
    given: [...examUntilQuestions(t0)],
    when: round(t0 + 1_000),
    verdict: { kind: 'allow' },
    without: ['note'],
  },

  // tool.requested: load_skill
  {
    name: 'load_skill with a malformed input is left to the tool to refuse',
    given: [started()],
    when: requested('load_skill', { nme: 'x' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'load_skill of any skill when nothing is in progress',
    given: [started()],
    when: requested('load_skill', { name: 'exam' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'another skill while a plan is unfinished is a violation',
    given: [started(), loaded(exam)],
    when: requested('load_skill', { name: 'coach' }),
    verdict: {
      kind: 'refuse',
      message:
        'Skill exam is in progress and its plan is not complete. Allowed next: checkpoint setup (request_human_approval with checkpoint "setup").',
    },
    state: { violations: 1 },
  },
  {
    name: 'reloading the skill in progress is allowed',
    given: [started(), loaded(exam)],
    when: requested('load_skill', { name: 'exam' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'after a routing choice, exactly the chosen skill may be loaded',
    given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: '→ coach' })],
    when: requested('load_skill', { name: 'writer' }),
    verdict: { kind: 'refuse', message: 'The human chose coach at route; only that skill may be loaded now.' },
  },
  {
    name: 'the chosen skill loads in the same turn',
    given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: '→ coach' })],
    when: requested('load_skill', { name: 'coach' }),
    verdict: { kind: 'allow' },
  },
  {
    name: '"Stop here" allows only the final answer in that turn',
    given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: 'Stop here' })],
    when: requested('load_skill', { name: 'writer' }),
    verdict: {
      kind: 'refuse',
      message: 'The human chose to stop at route; give your final answer now without loading another skill.',
    },
  },
  {
    name: 'the violation at the limit ends the turn, naming skill and step',
    given: [
      started(),
      loaded(exam),
      requested('load_skill', { name: 'coach' }),
      requested('load_subskill', { skill: 'exam', subskill: 'grade' }),
    ],
    when: requested('load_skill', { name: 'coach' }),
    verdict: {
      kind: 'end',
      ending: {
        status: 'failed',
        reason: 'plan_violations',
        error: {
          message:
            'The model broke the plan of skill exam at its start 3 times; the turn was stopped. Remaining: checkpoint:setup → ask → grade → report → checkpoint:route.',
        },
      },
    },
  },

  // tool.requested: load_subskill
  {
    name: 'a step out of order is a violation, with what is allowed',
    given: [started(), loaded(exam)],
    when: requested('load_subskill', { skill: 'exam', subskill: 'report' }),
    verdict: {
      kind: 'refuse',
      message:
        'Not allowed now: step report of exam. Allowed next: checkpoint setup (request_human_approval with checkpoint "setup").',
    },
  },
  {
    name: 'a subskill the plan does not name is always allowed',
    given: [started(), loaded(exam)],
    when: requested('load_subskill', { skill: 'exam', subskill: 'notes' }),
    verdict: { kind: 'allow' },
  },
  {
    name: "a subskill of another skill is not the plan's business",
    given: [started(), loaded(exam)],
    when: requested('load_subskill', { skill: 'coach', subskill: 'drill' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'load_subskill without a plan',
    given: [started()],
    when: requested('load_subskill', { skill: 'exam', subskill: 'ask' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'load_subskill with a malformed input is left to the tool',
    given: [started(), loaded(exam)],
    when: requested('load_subskill', { skill: 'exam' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'a step past its run limit is refused',
    given: [...examUntilQuestions(), stepped('exam', 'grade'), stepped('exam', 'grade')],
    when: requested('load_subskill', { skill: 'exam', subskill: 'grade' }),
    verdict: {
      kind: 'refuse',
      message:
        'Step grade of exam has run its limit of 2 times in this plan. Allowed next: step report (load_subskill with skill "exam" and subskill "report").',
    },
  },
  {
    name: 'after the deadline the plan refuses the steps it jumped over',
    given: [...examUntilQuestions(), round(t0 + 31 * 60_000)],
    when: requested('load_subskill', { skill: 'exam', subskill: 'grade' }),
    verdict: {
      kind: 'refuse',
      message:
        'Not allowed now: step grade of exam. The time limit has passed, so the plan has moved on. Allowed next: step report (load_subskill with skill "exam" and subskill "report").',
    },
  },

  // tool.requested: other tools
  {
    name: 'an engine tool in scope is allowed',
    given: [started()],
    when: requested('read_file', { path: 'a.md' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'a tool that does not exist is refused (not a violation), listing the tools',
    given: [started()],
    when: requested('web_search', { q: 'x' }),
    verdict: {
      kind: 'refuse',
      message:
        'There is no tool named "web_search". Available tools: load_skill, load_subskill, read_file, list_skills, invoke_skill, submit_output, request_human_approval.',
    },
    state: { violations: 0 },
  },

  // tool.finished
  {
    name: 'a loaded skill starts its plan, becomes active, and says what is allowed first',
    given: [started()],
    when: loaded(exam, t0, 'toolu_exam'),
    verdict: { kind: 'allow', allowedNext: [{ kind: 'checkpoint', name: 'setup' }] },
    state: {
      plan: { skill: 'exam', current: null },
      active: { name: 'exam' },
      clockSince: t0,
      instructions: { skill: 'toolu_exam' },
    },
  },
  {
    name: 'reloading the skill in progress keeps its position',
    given: [...examUntilQuestions()],
    when: loaded(exam),
    verdict: { kind: 'allow', allowedNext: [{ kind: 'step', name: 'grade' }] },
    state: { plan: { current: 'ask' } },
  },
  {
    name: 'a skill without a plan ends a finished plan and becomes active',
    given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: '→ coach' })],
    when: loaded(writer),
    verdict: { kind: 'allow', allowedNext: [] },
    state: { plan: null, route: null, active: { name: 'writer' } },
  },
  {
    name: 'a step moves the plan',
    given: [...examUntilQuestions()],
    when: stepped('exam', 'grade'),
    verdict: { kind: 'allow', note: 'Step limit: grade may run at most 2 times in this plan; this is run 1, 1 left.' },
    state: { plan: { current: 'grade', stepRuns: { ask: 1, grade: 1 } } },
  },
  {
    name: 'a step without a limit has no note',
    given: [...examUntilQuestions(), stepped('exam', 'grade')],
    when: stepped('exam', 'report'),
    verdict: { kind: 'allow' },
    without: ['note'],
  },
  {
    name: 'a subskill of another skill leaves the plan alone',
    given: [...examUntilQuestions()],
    when: stepped('coach', 'drill'),
    verdict: { kind: 'allow' },
    state: { plan: { current: 'ask' } },
  },
  {
    name: 'a subskill without a plan is only remembered for compaction',
    given: [started()],
    when: stepped('writer', 'tips'),
    verdict: { kind: 'allow' },
    state: { plan: null },
  },
  {
    name: 'a plain tool changes nothing',
    given: [started()],
    when: { type: 'tool.finished', at: t0, call: call('read_file'), outcome: { kind: 'done' } },
    verdict: { kind: 'allow' },
  },

  // final.proposed
  { name: 'a final answer without a plan is accepted', given: [started()], when: final, verdict: { kind: 'allow' } },
  {
    name: 'a final answer before the plan is complete is refused and counted',
    given: [started(), loaded(exam)],
    when: final,
    verdict: {
      kind: 'refuse',
      message:
        'Your answer cannot be accepted yet: the plan of skill exam is not complete. Remaining: checkpoint:setup → ask → grade → report → checkpoint:route. Allowed next: checkpoint setup (request_human_approval with checkpoint "setup"). Continue with the plan.',
    },
    state: { violations: 1 },
  },
  {
    name: 'a final answer after the plan is complete is accepted',
    given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: 'Stop here' })],
    when: final,
    verdict: { kind: 'allow' },
  },

  // checkpoints: asking
  {
    name: 'a request that is not a checkpoint request is refused, not counted',
    given: [started()],
    when: requested('request_human_approval', { checkpoint: 'Bad Name' }),
    verdict: { kind: 'refuse' },
    state: { violations: 0, open: null },
  },
  {
    name: 'a free checkpoint without a skill waits as the configuration says',
    given: [started()],
    when: ask('anything', { params: { n: 1 } }),
    verdict: {
      kind: 'allow',
      ask: {
        id: 'cp-1',
        name: 'anything',
        params: { n: 1 },
        paramsSchema: { type: 'object', properties: { n: { type: 'number' } }, additionalProperties: false },
        actions: ['approve', 'modify', 'cancel'],
        ttlMs: null,
        onTimeout: 'cancel',
      },
    },
    state: { checkpointCount: 1, open: { id: 'cp-1' } },
  },
  {
    name: 'a declared checkpoint: its params are checked and defaulted, its policy applies, the clock stops',
    given: [started(), loaded(exam, t0)],
    when: ask('setup', { params: { topics: ['trees'] } }, t0 + 500),
    verdict: {
      kind: 'allow',
      ask: {
        params: { topics: ['trees'], count: 10, minutes: 30 },
        paramsSchema: { required: ['topics'] },
        ttlMs: 60_000,
        onTimeout: 'cancel',
      },
    },
    state: { clockSince: null, usage: { exam: { activeMs: 500 } } },
  },
  {
    name: 'proposed params outside the declared ranges are refused with every problem, not counted',
    given: [started(), loaded(exam)],
    when: ask('setup', { params: { count: 500, minutes: -5, topics: ['a', 42], essays: true } }),
    verdict: {
      kind: 'refuse',
      problems: [
        { path: 'params.count', rule: 'maximum', allowed: { minimum: 1, maximum: 50 } },
        { path: 'params.minutes', rule: 'minimum', allowed: { minimum: 1, maximum: 240 } },
        { path: 'params.topics[1]', rule: 'type', allowed: 'string' },
        { path: 'params.essays', rule: 'additionalProperties', allowed: ['count', 'minutes', 'topics'] },
      ],
    },
    state: { violations: 0, open: null },
  },
  {
    name: 'a named checkpoint out of order is a violation',
    given: [started(), loaded(exam)],
    when: ask('route'),
    verdict: {
      kind: 'refuse',
      message:
        'Not allowed now: checkpoint route of exam. Allowed next: checkpoint setup (request_human_approval with checkpoint "setup").',
    },
    state: { violations: 1 },
  },
  {
    name: 'refused checkpoints end the turn at the violation limit',
    given: [started(), loaded(exam), ask('route'), ask('route')],
    when: ask('route'),
    verdict: { kind: 'end', ending: { reason: 'plan_violations' } },
  },
  {
    name: 'a routing checkpoint offers its declared routes, whatever the model offers',
    given: examUntilRoute().slice(0, -1),
    when: ask('route', { options: ['anything'] }),
    verdict: {
      kind: 'allow',
      ask: { options: ['→ coach', 'Stop here'], actions: ['choose', 'cancel'], ttlMs: 3_600_000, onTimeout: 'skip' },
    },
  },
  {
    name: "a free question within a plan takes the skill's free-checkpoint policy",
    given: [...examUntilQuestions()],
    when: question('q1'),
    verdict: {
      kind: 'allow',
      ask: { kind: 'question', ttlMs: 15 * 60_000, onTimeout: 'skip', actions: ['answer', 'cancel'] },
    },
  },
  {
    name: 'a free question never waits past the plan deadline',
    given: [...examUntilQuestions(t0)],
    when: question('q1', t0 + 25 * 60_000),
    verdict: { kind: 'allow', ask: { ttlMs: 5 * 60_000, onTimeout: 'skip' } },
  },
  {
    name: 'after the deadline, free questions are refused',
    given: [...examUntilQuestions(), round(t0 + 31 * 60_000)],
    when: question('q9'),
    verdict: {
      kind: 'refuse',
      message:
        'The time limit of exam has passed: ask nothing more. Allowed next: step report (load_subskill with skill "exam" and subskill "report").',
    },
  },
  {
    name: 'a resumed plan whose skill was not pinned still has its declared checkpoints',
    given: [
      started({
        carry: {
          version: 3,
          plan: apply([started(), loaded(exam)]).state.plan,
          route: null,
          skills: [],
          snapshots: [],
        },
      }),
    ],
    when: ask('setup', { params: { topics: ['a'] } }),
    verdict: { kind: 'allow', ask: { ttlMs: 60_000, params: { count: 10 } } },
  },
  {
    name: 'a skill without a plan declares its checkpoint policy',
    given: [started(), loaded(writer)],
    when: ask('draft_ok', { params: { tone: 'casual' } }),
    verdict: { kind: 'allow', ask: { ttlMs: 5_000, onTimeout: 'skip' } },
  },
  {
    name: 'a skill that says nothing about free checkpoints leaves them to the configuration',
    given: [started({ settings: { ...settings, checkpointTtlMs: 9_000 } }), loaded(writer)],
    when: ask('other'),
    verdict: { kind: 'allow', ask: { ttlMs: 9_000, onTimeout: 'cancel', paramsSchema: null } },
  },

  // checkpoints: decisions
  {
    name: 'a decision for a checkpoint id never given is not found',
    given: [started(), ask('a')],
    when: resolved('cp-7', { action: 'approve' }),
    verdict: { kind: 'refuse', code: 'not_found', message: 'This turn has no checkpoint "cp-7".' },
  },
  {
    name: 'a decision without an id is not found',
    given: [started(), ask('a')],
    when: resolved(undefined as unknown as string, { action: 'approve' }),
    verdict: { kind: 'refuse', code: 'not_found' },
  },
  {
    name: 'a decision for a settled checkpoint is not pending',
    given: [started(), ask('a'), resolved('cp-1', { action: 'approve' })],
    when: resolved('cp-1', { action: 'approve' }),
    verdict: { kind: 'refuse', code: 'not_pending', message: 'Checkpoint cp-1 is no longer pending.' },
  },
  {
    name: 'a modify outside the declared params is an invalid decision naming param, rule and allowed values',
    given: [started(), loaded(exam), ask('setup', { params: { topics: ['a'] } })],
    when: resolved('cp-1', { action: 'modify', overrides: { count: 500 } }),
    verdict: {
      kind: 'refuse',
      code: 'invalid_decision',
      message: 'overrides.count is 500, above the maximum 50.',
      problems: [
        {
          path: 'overrides.count',
          rule: 'maximum',
          allowed: { minimum: 1, maximum: 50 },
          message: 'overrides.count is 500, above the maximum 50',
        },
      ],
    },
  },
  {
    name: 'approve: the plan moves on and the deadline starts from the approved params',
    given: [started(), loaded(exam), ask('setup', { params: { topics: ['a'], minutes: 20 } })],
    when: resolved('cp-1', { action: 'approve' }, t0 + 100),
    verdict: { kind: 'allow', result: { approved: true } },
    state: {
      open: null,
      plan: { current: 'checkpoint:setup', deadline: { atMs: t0 + 100 + 20 * 60_000, jumpTo: 'report' } },
      roundsSinceHuman: 0,
    },
  },
  {
    name: 'modify with overrides and a note: the overrides set the deadline, the model gets both',
    given: [started(), loaded(exam), ask('setup', { params: { topics: ['a'] } })],
    when: resolved('cp-1', { action: 'modify', overrides: { minutes: 2 }, note: 'no essays please' }),
    verdict: { kind: 'allow', result: { approved: true, overrides: { minutes: 2 }, note: 'no essays please' } },
    state: { plan: { deadline: { atMs: t0 + 2 * 60_000 } } },
  },
  {
    name: 'modify with overrides alone',
    given: [started(), ask('plain', { params: { n: 1 } })],
    when: resolved('cp-1', { action: 'modify', overrides: { n: 2 } }),
    verdict: { kind: 'allow', result: { approved: true, overrides: { n: 2 } } },
    without: [],
  },
  {
    name: 'modify with a note alone',
    given: [started(), ask('plain', { params: { n: 1 } })],
    when: resolved('cp-1', { action: 'modify', note: 'make it 15 questions, no essays' }),
    verdict: { kind: 'allow', result: { approved: true, note: 'make it 15 questions, no essays' } },
  },
  {
    name: 'choosing a route gates the next skill',
    given: examUntilRoute(),
    when: resolved('cp-2', { action: 'choose', choice: '→ coach' }),
    verdict: { kind: 'allow', result: { choice: '→ coach' } },
    state: { route: { skill: 'coach', from: 'route' }, plan: { position: { complete: true } } },
  },
  {
    name: 'a free question answered leaves the plan where it is',
    given: [...examUntilQuestions(), question('q1')],
    when: resolved('cp-2', { action: 'answer', answer: 'A' }),
    verdict: { kind: 'allow', result: { answer: 'A' } },
    state: { plan: { current: 'ask' } },
  },
  {
    name: 'cancel at a named checkpoint ends the plan and the turn, after a last word',
    given: [started(), loaded(exam), ask('setup', { params: { topics: ['a'] } })],
    when: resolved('cp-1', { action: 'cancel' }),
    verdict: {
      kind: 'end',
      ending: { status: 'cancelled', reason: 'cancelled_by_user' },
      lastWord: { purpose: 'explain the cancellation' },
      result: { cancelled: true },
    },
    state: { plan: null, route: null },
  },
  {
    name: 'cancel at a free question keeps the plan for the next turn',
    given: [...examUntilQuestions(), question('q1')],
    when: resolved('cp-2', { action: 'cancel' }),
    verdict: { kind: 'end', ending: { status: 'cancelled' } },
    state: { plan: { current: 'ask' } },
  },
  {
    name: "a decision restarts the active skill's clock",
    given: [started(), loaded(writer, t0), ask('draft_ok', { params: { tone: 'formal' } }, t0 + 300)],
    when: resolved('cp-1', { action: 'approve' }, t0 + 900_000),
    verdict: { kind: 'allow' },
    state: { clockSince: t0 + 900_000, usage: { writer: { activeMs: 300 } } },
  },

  {
    name: 'violations at a step name the step',
    given: [...examUntilQuestions(), final, final],
    when: final,
    verdict: {
      kind: 'end',
      ending: {
        error: {
          message:
            'The model broke the plan of skill exam at step ask 3 times; the turn was stopped. Remaining: grade → report → checkpoint:route.',
        },
      },
    },
  },
  {
    name: 'violations after the plan is complete leave nothing remaining',
    given: [
      ...examUntilRoute(),
      resolved('cp-2', { action: 'choose', choice: 'Stop here' }),
      requested('load_skill', { name: 'writer' }),
      requested('load_skill', { name: 'writer' }),
    ],
    when: requested('load_skill', { name: 'writer' }),
    verdict: {
      kind: 'end',
      ending: {
        error: {
          message:
            'The model broke the plan of skill exam at step checkpoint:route 3 times; the turn was stopped. Remaining: none.',
        },
      },
    },
  },
  {
    name: 'a skill limit after its plan is complete has nothing left to carry',
    given: [started(), loaded(limited), stepped('limited', 'a'), stepped('limited', 'b'), round(), round()],
    when: round(),
    verdict: {
      kind: 'end',
      ending: {
        error: {
          message:
            "Skill limited reached its limit of 2 model rounds (limits.max-iterations: 2); the turn was stopped. The plan is kept for the session's next turn. Remaining: nothing.",
        },
      },
    },
  },
  {
    name: 'a limited step that has not run yet is allowed',
    given: [...examUntilQuestions()],
    when: requested('load_subskill', { skill: 'exam', subskill: 'grade' }),
    verdict: { kind: 'allow' },
  },
  {
    name: 'a subskill loaded that the plan does not name moves nothing and says nothing',
    given: [...examUntilQuestions()],
    when: stepped('exam', 'notes'),
    verdict: { kind: 'allow' },
    without: ['note'],
    state: { plan: { current: 'ask' } },
  },
  {
    name: 'a named checkpoint the skill does not declare still moves the plan',
    given: [started(), loaded(gate), ask('go')],
    when: resolved('cp-1', { action: 'approve' }),
    verdict: { kind: 'allow' },
    state: { plan: { current: 'checkpoint:go' }, route: null },
  },
  {
    name: 'a decision whose action the checkpoint does not take',
    given: [started(), question('q')],
    when: resolved('cp-1', { action: 'approve' }),
    verdict: {
      kind: 'refuse',
      code: 'invalid_decision',
      message: 'A question checkpoint accepts answer, cancel; not "approve".',
    },
  },

  // registered tools: scope, validation, approval
  {
    name: 'a turn started without a tool catalog has no registered tools',
    given: [],
    when: started(),
    verdict: { kind: 'allow' },
    state: { tools: [], rootGrants: [] },
  },
  {
    name: 'the root turn may call a tool of the default set, its input validated with defaults',
    given: [withTools()],
    when: requested('calc', { q: '1+1' }),
    verdict: { kind: 'allow', input: { q: '1+1', n: 1 } },
    without: ['ask'],
  },
  {
    name: 'a registered tool outside the default set is a violation at the root',
    given: [withTools()],
    when: requested('fetch', { q: 'x' }),
    verdict: {
      kind: 'refuse',
      message:
        'Tool fetch is not available before a skill is loaded: the tools granted now are calc. Use only the tools you were given.',
    },
    state: { violations: 1 },
  },
  {
    name: 'violations at the root without a plan or a route name the rules of the turn',
    given: [withTools({ settings: { ...settings, maxPlanViolations: 2 } }), requested('fetch', { q: 'x' })],
    when: requested('fetch', { q: 'x' }),
    verdict: {
      kind: 'end',
      ending: {
        reason: 'plan_violations',
        error: { message: 'The model broke the rules of this turn 2 times; the turn was stopped. Remaining: none.' },
      },
    },
  },
  {
    name: 'a skill that grants nothing offers only the engine tools',
    given: [withTools(), loaded(writer)],
    when: requested('calc', { q: '1' }),
    verdict: {
      kind: 'refuse',
      message:
        "Tool calc is not available while skill writer is active: no tools are granted now beyond the engine's own. Use only the tools you were given.",
    },
    state: { violations: 1 },
  },
  {
    name: 'a skill grants a tool by name in allowed-tools',
    given: [withTools(), loaded(researcher)],
    when: requested('fetch', { q: 'x', n: 2 }),
    verdict: { kind: 'allow', input: { q: 'x', n: 2 } },
  },
  {
    name: 'input that does not validate is refused naming every field, and is no violation',
    given: [withTools()],
    when: requested('calc', { n: 'x', r: 1 }),
    verdict: {
      kind: 'refuse',
      message:
        'calc was not run: its input is not valid: n is a string, not an integer; r is not allowed here; the allowed names are q, n; q is required. Fix the input and call it again.',
      problems: [{ path: 'n', rule: 'type' }, { path: 'r' }, { path: 'q', rule: 'required' }],
    },
    state: { violations: 0 },
  },
  {
    name: 'input that is not an object is refused',
    given: [withTools()],
    when: requested('calc', null),
    verdict: {
      kind: 'refuse',
      message:
        'calc was not run: its input is not valid: the value is null, not an object. Fix the input and call it again.',
    },
  },
  {
    name: 'a tool that needs approval opens a checkpoint with its input as params and its schema',
    given: [withTools(), loaded(researcher)],
    when: requested('deploy', { q: 'prod' }),
    verdict: {
      kind: 'allow',
      ask: {
        id: 'cp-1',
        name: 'tool:deploy',
        kind: 'approval',
        params: { q: 'prod', n: 1 },
        paramsSchema: registry.tools[2].inputSchema,
        options: null,
        actions: ['approve', 'modify', 'cancel'],
        ttlMs: null,
        onTimeout: 'skip',
        tool: { name: 'deploy' },
        summary:
          'The assistant wants to run the tool deploy with the input in params. The deploy tool. Approve to run it as proposed, modify to change its input, or cancel to skip it.',
      },
    },
    without: ['input'],
    state: { open: { name: 'tool:deploy' }, clockSince: null },
  },
  {
    name: 'a turn that read the catalog by reference holds its headers and no detail yet',
    given: [],
    when: byReference(),
    verdict: { kind: 'allow' },
    state: {
      tools: [],
      headers: [
        { name: 'calc', detail: expect.any(String) },
        { name: 'fetch' },
        { name: 'deploy' },
        { name: 'gh__issue' },
      ],
      rootGrants: ['calc'],
    },
  },
  {
    name: 'by reference, a tool of no header is no tool',
    given: [byReference()],
    when: requested('nope', { q: '1' }),
    verdict: {
      kind: 'refuse',
      message:
        'There is no tool named "nope". Available tools: load_skill, load_subskill, read_file, list_skills, invoke_skill, submit_output, request_human_approval, calc.',
    },
    state: { violations: 0 },
  },
  {
    name: 'by reference, a tool outside the grants is a violation, its detail unread',
    given: [byReference()],
    when: requested('fetch', { q: 'x' }),
    verdict: {
      kind: 'refuse',
      message:
        'Tool fetch is not available before a skill is loaded: the tools granted now are calc. Use only the tools you were given.',
    },
    state: { violations: 1 },
  },
  {
    name: 'by reference, a granted tool whose detail was not read is not run',
    given: [byReference()],
    when: requested('calc', { q: '1' }),
    verdict: { kind: 'refuse', message: 'calc was not run: its definition has not been read. Call it again.' },
    state: { violations: 0 },
  },
  {
    name: 'by reference, a granted tool whose detail was read is validated with it',
    given: [byReference(), detailed('calc')],
    when: requested('calc', { q: '1+1' }),
    verdict: { kind: 'allow', input: { q: '1+1', n: 1 } },
  },
  {
    name: 'by reference, a detail read again is kept once',
    given: [byReference(), detailed('calc')],
    when: detailed('fetch', 'calc', 'fetch'),
    verdict: { kind: 'allow' },
    state: { tools: [{ name: 'calc' }, { name: 'fetch' }] },
  },
  {
    name: 'by reference, details all held already change nothing',
    given: [byReference(), detailed('calc')],
    when: detailed('calc'),
    verdict: { kind: 'allow' },
    state: { tools: [{ name: 'calc' }] },
  },
  {
    name: 'an MCP tool granted by server says where it comes from',
    given: [withTools(), loaded(researcher)],
    when: requested('gh__issue', { q: 'bug' }),
    verdict: {
      kind: 'allow',
      ask: { summary: /^The assistant wants to run the tool gh__issue \(from MCP server gh\)/ },
    },
  },
  {
    name: 'an approved tool call runs with the proposed input',
    given: deployAsked(),
    when: resolved('cp-1', { action: 'approve' }),
    verdict: { kind: 'allow', input: { q: 'prod', n: 1 }, result: { approved: true } },
    without: ['note'],
    state: { open: null, roundsSinceHuman: 0 },
  },
  {
    name: 'a modified tool call runs with the changed input, and the model is told',
    given: deployAsked(),
    when: resolved('cp-1', { action: 'modify', overrides: { q: 'staging' } }),
    verdict: {
      kind: 'allow',
      input: { q: 'staging', n: 1 },
      note: 'Before deploy ran, the human changed its input to {"q":"staging","n":1}',
    },
  },
  {
    name: 'a note alone goes to the model',
    given: deployAsked(),
    when: resolved('cp-1', { action: 'modify', note: 'careful' }),
    verdict: { kind: 'allow', input: { q: 'prod', n: 1 }, note: 'Before deploy ran, the human said: careful' },
  },
  {
    name: 'changes and a note',
    given: deployAsked(),
    when: resolved('cp-1', { action: 'modify', overrides: { n: 3 }, note: 'careful' }),
    verdict: {
      kind: 'allow',
      note: 'Before deploy ran, the human changed its input to {"q":"prod","n":3} and said: careful',
    },
  },
  {
    name: 'a modified input is validated again',
    given: deployAsked(),
    when: resolved('cp-1', { action: 'modify', overrides: { q: 'much too long for it' } }),
    verdict: {
      kind: 'refuse',
      code: 'invalid_decision',
      message: 'overrides.q is 20 characters long, longer than 10.',
    },
    state: { open: { name: 'tool:deploy' } },
  },
  {
    name: 'a cancelled tool call does not run and the turn goes on',
    given: deployAsked(),
    when: resolved('cp-1', { action: 'cancel' }),
    verdict: { kind: 'allow', result: { cancelled: true, ran: false } },
    without: ['input'],
    state: { open: null, plan: { skill: 'researcher' } },
  },
  {
    name: 'an expired tool approval does not run the tool and the turn goes on',
    given: deployAsked(),
    when: expired(),
    verdict: { kind: 'allow', result: { skipped: true, ran: false } },
    without: ['input'],
    state: { open: null },
  },

  // checkpoints: expiry
  {
    name: 'an expiry with nothing pending is refused',
    given: [started()],
    when: expired(),
    verdict: { kind: 'refuse', code: 'not_pending' },
  },
  {
    name: 'expiry with the cancel policy ends the turn at once, the plan kept',
    given: [started(), loaded(exam), ask('setup', { params: { topics: ['a'] } })],
    when: expired(),
    verdict: {
      kind: 'end',
      ending: { status: 'cancelled', reason: 'expired', output: 'Checkpoint setup expired before anyone answered.' },
      result: { expired: true },
    },
    without: ['lastWord'],
    state: { open: null, plan: { skill: 'exam' } },
  },
  {
    name: 'expiry with the skip policy: the plan moves past it and a skipped routing choice means stop',
    given: examUntilRoute(),
    when: expired(),
    verdict: { kind: 'allow', result: { skipped: true } },
    state: { route: { skill: null, from: 'route' } },
  },
  {
    name: 'expiry with approve-defaults approves the proposal with the declared defaults filled in',
    given: [started(), loaded(coach), ask('focus', { params: {} })],
    when: expired(),
    verdict: { kind: 'allow', result: { approved: true, defaulted: true, params: { depth: 'deep' } } },
    state: { plan: { current: 'checkpoint:focus' } },
  },
  {
    name: 'expiry with approve-defaults and no params proposed',
    given: [started(), loaded(coach), ask('focus')],
    when: expired(),
    verdict: { kind: 'allow', result: { params: { depth: 'deep' } } },
  },
  {
    name: 'expiry with approve-defaults of an approval that declares and proposes no params approves none',
    given: [started(), loaded(lenient), ask('go_ahead')],
    when: expired(),
    verdict: { kind: 'allow', result: { approved: true, defaulted: true, params: {} } },
  },
  {
    name: 'expiry with approve-defaults of a declared question is a skip: there is no proposal to approve',
    given: [
      started(),
      loaded(lenient),
      requested('request_human_approval', { checkpoint: 'which', summary: 'Which one?', kind: 'question' }),
    ],
    when: expired(),
    verdict: { kind: 'allow', result: { skipped: true } },
  },
];

describe('the turn policy, event by event', () => {
  it.each(cases)('$name', ({ given, when, verdict, without, state }) => {
    const before = apply(given).state;
    const after = reducePolicy(before, when);
    expect(after.verdict).toMatchObject(verdict);
    for (const key of without ?? []) expect(after.verdict).not.toHaveProperty(key);
    if (state) expect(after.state).toMatchObject(state);
  });
});

describe('turns that continue a plan', () => {
  const unfinished = () => apply(examUntilQuestions()).state;
  /** The carry a turn hands on, as the next turn sees it once it has read the named skills back (unresolvedSkills). */
  const carried = (state: PolicyState, pinned: SkillSnapshot[] = [snapshotOf(exam)]) => {
    const carry = carryOf(state, Object.fromEntries(pinned.map((s) => [s.name, s])))!;
    return withSnapshots(
      carry,
      pinned.filter((s) => unresolvedSkills(carry).some((ref) => ref.name === s.name && ref.hash === s.hash)),
    );
  };

  it.each([
    {
      name: 'an unfinished plan resumes with its skill active from the start of the turn',
      carry: () => carried(unfinished()),
      note: 'You are in the middle of skill exam; the last step done was ask. Remaining: grade → report → checkpoint:route. Allowed next: step grade (load_subskill with skill "exam" and subskill "grade"). Load the skill again with load_skill to read its instructions, then continue from there.',
      state: { plan: { current: 'ask' }, active: { name: 'exam' }, clockSince: t0, violations: 0 },
    },
    {
      name: 'a plan at its start resumes from its start',
      carry: () => carried(apply([started(), loaded(exam)]).state),
      note: 'You are in the middle of skill exam. Remaining: checkpoint:setup → ask → grade → report → checkpoint:route. Allowed next: checkpoint setup (request_human_approval with checkpoint "setup"). Load the skill again with load_skill to read its instructions, then continue from there.',
      state: { plan: { current: null } },
    },
    {
      name: 'a plan without its pinned skill resumes without an active skill',
      carry: () => carried(unfinished(), []),
      state: { plan: { current: 'ask' }, active: null },
    },
    {
      name: 'a chosen skill not loaded yet is passed on as a note, not a gate',
      carry: () =>
        carried(apply([...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: '→ coach' })]).state),
      note: "In the previous turn, at route, the human chose coach as the next skill and it was not loaded yet. If the user's message goes on from there, load it with load_skill; otherwise follow the new request.",
      state: { plan: null, route: null },
    },
    {
      name: 'a carried "stop" is dropped: the new request is free',
      carry: (): PlanCarry => ({
        version: 3,
        plan: null,
        route: { skill: null, from: 'route' },
        skills: [],
        snapshots: [],
      }),
      note: null,
      state: { route: null },
    },
  ])('$name', ({ carry, note, state }) => {
    const { verdict, state: after } = reducePolicy(newPolicyState(), started({ carry: carry() }));
    expect(verdict).toMatchObject({ kind: 'allow', ...(note ? { note } : {}) });
    if (note === null) expect(verdict).not.toHaveProperty('note');
    expect(after).toMatchObject(state);
  });

  it('after "Stop here" the next turn may load any skill', () => {
    const stopped = apply([...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: 'Stop here' })]).state;
    expect(carryOf(stopped, {})).toBeUndefined();
    const next = apply([started({ carry: carryOf(stopped, {}) }), requested('load_skill', { name: 'writer' })]);
    expect(next.verdicts.at(-1)).toEqual({ kind: 'allow' });
  });

  it('carries what the session needs, and only that: the pinned skill by name and hash, not whole', () => {
    const carry = carryOf(unfinished(), { exam: snapshotOf(exam), writer: snapshotOf(writer) })!;
    expect(carry).toMatchObject({
      version: 3,
      plan: { skill: 'exam' },
      route: null,
    });
    expect(Object.keys(carry).sort()).toEqual(['plan', 'route', 'skills', 'snapshots', 'version']);
    expect(carry.skills).toEqual([{ name: 'exam', hash: snapshotOf(exam).hash }]);
    expect(carry.snapshots).toEqual([]);
    expect(unresolvedSkills(carry)).toEqual([{ name: 'exam', hash: snapshotOf(exam).hash }]);
    expect(unresolvedSkills(withSnapshots(carry, [snapshotOf(exam)]))).toEqual([]);
    expect(unresolvedSkills(undefined)).toEqual([]);
    expect(carryOf(apply([started(), loaded(writer)]).state, { writer: snapshotOf(writer) })).toBeUndefined();
    const routed = carryOf(
      apply([...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: '→ coach' })]).state,
      { exam: snapshotOf(exam) },
    );
    expect(routed).toMatchObject({ plan: null, route: { skill: 'coach' }, skills: [], snapshots: [] });
  });

  it('re-pins the carried skills for the turn that continues the plan', () => {
    expect(pinnedSkillsOf(undefined)).toEqual({ loaded: {}, loadOrder: [] });
    expect(pinnedSkillsOf(carried(unfinished())).loadOrder).toEqual(['exam']);
  });
});

describe("a carry as the current code reads it (a session continued as new, a turn's resume)", () => {
  const plan = () => apply(examUntilQuestions()).state.plan;

  it('a carry of version 3 without skills or snapshots reads with none', () => {
    expect(readPlanCarry({ version: 3, plan: null, route: { skill: 'coach', from: 'route' } })).toEqual({
      version: 3,
      plan: null,
      route: { skill: 'coach', from: 'route' },
      skills: [],
      snapshots: [],
    });
  });

  it.each([
    ['nothing', undefined],
    ['not an object', 'plan'],
    ['an unknown shape', { something: 1 }],
    ['a carry of the code before the policy core', { orchestrator: {}, snapshots: [] }],
    [
      'a carry of version 2, which the legacy code migrates before it hands one on',
      { version: 2, plan: null, route: null, snapshots: [] },
    ],
  ])('%s is no carry', (_name, value) => {
    expect(readPlanCarry(value)).toBeUndefined();
  });

  it("a legacy session's carry of version 3 keeps its plan, route, skills and snapshots, without the orchestrator copy", () => {
    const legacy = {
      version: 3,
      plan: plan(),
      route: null,
      skills: [{ name: 'exam', hash: snapshotOf(exam).hash }],
      snapshots: [snapshotOf(exam)],
      orchestrator: { plan: plan(), route: null, violations: 0 },
    };
    expect(readPlanCarry(legacy)).toEqual({
      version: 3,
      plan: plan(),
      route: null,
      skills: [{ name: 'exam', hash: snapshotOf(exam).hash }],
      snapshots: [snapshotOf(exam)],
    });
  });

  it('a carry the current code hands on reads back as it was', () => {
    const carry = carryOf(apply(examUntilQuestions()).state, { exam: snapshotOf(exam) })!;
    expect(readPlanCarry(JSON.parse(JSON.stringify(carry)))).toEqual(carry);
  });
});

describe('plan helpers', () => {
  const plan = (manifest: SkillManifest) => startSkillPlan(manifest, t0)!;

  it('a fixed deadline starts with the plan; a skill without a plan has none', () => {
    expect(plan(timed).deadline).toEqual({ atMs: t0 + 60_000, jumpTo: 'wrap' });
    expect(startSkillPlan(writer, t0)).toBeNull();
    expect(apply([started(), loaded(timed)]).state.plan!.deadline).toEqual({ atMs: t0 + 60_000, jumpTo: 'wrap' });
  });

  it('describes what is allowed, down to "nothing" when the plan is complete with no step left', () => {
    let p = takeStep(takeStep(plan(timed), 'intro'), 'work');
    expect(describeAllowed(p)).toBe(
      'step work (load_subskill with skill "timed" and subskill "work"); or step wrap (load_subskill with skill "timed" and subskill "wrap")',
    );
    p = takeStep(p, 'wrap');
    expect(describeAllowed(p)).toBe('the final answer (the plan is complete)');
    expect(remainingSteps(p)).toEqual([]);
    expect(resumeNote(p)).toContain('Remaining: nothing.');
    const single: ActivePlan = { ...plan(skill('one', 'only')), position: { next: [], complete: false } };
    expect(describeAllowed(single)).toBe('nothing: the plan is complete');
    expect(remainingSteps(single)).toEqual([]);
  });

  it('a step the position does not allow leaves the plan as it is', () => {
    const p = plan(timed);
    expect(takeStep(p, 'wrap')).toBe(p);
    expect(stepRefusal(p, 'intro')).toBeNull();
  });

  it('step limits filter what is allowed', () => {
    const limited = { ...plan(skill('l', 'a b* c')), stepLimits: { b: 1 } };
    const afterB = takeStep(takeStep(limited, 'a'), 'b');
    expect(allowedNow(afterB)).toEqual([{ kind: 'step', name: 'c' }]);
  });

  it('checkpoints: free ones before a deadline passes and after the plan is complete; named ones in order', () => {
    const p = plan(exam);
    expect(checkpointRefusal(p, 'free')).toBeNull();
    expect(
      checkpointRefusal({ ...p, deadlinePassed: true, position: { ...p.position, complete: true } }, 'free'),
    ).toBeNull();
    expect(checkpointRefusal(p, 'setup')).toBeNull();
  });

  it('passing a checkpoint the position does not allow changes nothing; params that are not numbers start no deadline', () => {
    const p = plan(exam);
    expect(passCheckpoint(p, 'route', 'expired', {}, t0)).toEqual({ plan: p });
    expect(passCheckpoint(p, 'setup', { action: 'approve' }, { minutes: 'ten' }, t0).plan.deadline).toBeNull();
    const withFixed = {
      ...p,
      deadlines: [...p.deadlines, { source: { kind: 'fixed' as const, ms: 5 }, jumpTo: 'report' }],
    };
    expect(passCheckpoint(withFixed, 'setup', { action: 'approve' }, {}, t0).plan.deadline).toBeNull();
  });

  it('a route the human names but the skill does not declare means stop', () => {
    const atRoute = apply(examUntilRoute()).state.plan!;
    expect(passCheckpoint(atRoute, 'route', { action: 'choose', choice: 'elsewhere' }, {}, t0).route).toEqual({
      skill: null,
      from: 'route',
    });
  });

  it('a deadline passes once', () => {
    const p = { ...plan(timed), deadline: { atMs: t0, jumpTo: 'wrap' } };
    const passed = passDeadline(p, t0).plan;
    expect(passed.deadlinePassed).toBe(true);
    expect(passDeadline(passed, t0 + 1).message).toBeUndefined();
    expect(passDeadline(plan(exam), t0).message).toBeUndefined();
    const nowhere = { ...p, deadline: { atMs: t0, jumpTo: 'nowhere' } };
    expect(passDeadline(nowhere, t0)).toEqual({ plan: nowhere });
  });
});

describe('pending checkpoints of turns of older code', () => {
  it('get the schema and actions that code applied', () => {
    const old = {
      id: 'cp-1',
      name: 'exam_params',
      kind: 'approval',
      summary: 's',
      params: { n: 1 },
      options: ['a'],
      requestedAt: 'x',
      expiresAt: null,
    } as unknown as PendingCheckpoint;
    expect(pendingCheckpointOf(old)).toMatchObject({
      paramsSchema: { properties: { n: { type: 'number' } } },
      actions: ['approve', 'modify', 'cancel', 'choose'],
    });
    expect(pendingCheckpointOf({ ...old, params: null })).toMatchObject({ paramsSchema: null });
    const current = { ...old, paramsSchema: null, actions: ['approve'] } as PendingCheckpoint;
    expect(pendingCheckpointOf(current)).toBe(current);
  });
});

describe('views for the workflow', () => {
  it('the position operators see, and the tool results compaction keeps', () => {
    const { state } = apply([
      started(),
      loaded(exam, t0, 'toolu_load'),
      ask('setup', { params: { topics: ['a'] } }),
      resolved('cp-1', { action: 'approve' }),
      {
        type: 'tool.finished',
        at: t0,
        call: { id: 'toolu_step', name: 'load_subskill', input: {} },
        outcome: { kind: 'subskill.loaded', skill: 'exam', subskill: 'ask' },
      },
    ]);
    expect(positionOf(state)).toEqual({
      skill: 'exam',
      step: 'ask',
      remaining: ['grade', 'report', 'checkpoint:route'],
    });
    expect([...protectedToolUseIds(state)]).toEqual(['toolu_load', 'toolu_step']);
    expect(positionOf(newPolicyState())).toEqual({ skill: null, step: null, remaining: [] });
    expect(toolsInScope(state)).toContain('request_human_approval');
  });

  it('the tool scope follows the active skill: the root default, then each skill its own grants', () => {
    const engine = [
      'load_skill',
      'load_subskill',
      'read_file',
      'list_skills',
      'invoke_skill',
      'submit_output',
      'request_human_approval',
    ];
    const root = apply([withTools()]).state;
    expect(toolsInScope(root)).toEqual([...engine, 'calc']);
    const researching = apply([withTools(), loaded(researcher)]).state;
    expect(toolsInScope(researching)).toEqual([...engine, 'fetch', 'deploy', 'gh__issue']);
    expect(toolsInScope(apply([withTools(), loaded(researcher), loaded(writer)]).state)).toEqual(engine);
  });

  it('by reference, the scope is the same, and the run reads the detail of the tools granted now it lacks', () => {
    const engine = [
      'load_skill',
      'load_subskill',
      'read_file',
      'list_skills',
      'invoke_skill',
      'submit_output',
      'request_human_approval',
    ];
    const names = (tools: Array<{ name: string }>) => tools.map((tool) => tool.name);
    const root = apply([byReference()]).state;
    expect(toolsInScope(root)).toEqual([...engine, 'calc']);
    expect(names(undetailedToolsInScope(root))).toEqual(['calc']);
    expect(registeredToolsInScope(root)).toEqual([]);
    const researching = apply([byReference(), detailed('calc'), loaded(researcher), detailed('deploy')]).state;
    expect(toolsInScope(researching)).toEqual([...engine, 'fetch', 'deploy', 'gh__issue']);
    expect(names(undetailedToolsInScope(researching))).toEqual(['fetch', 'gh__issue']);
    expect(undetailedToolsInScope(researching)[0]).toEqual(headerOf(registry.tools[1]));
    expect(registeredToolsInScope(researching)).toEqual([registry.tools[2]]);
    // In the registry's order, whatever the order the details were read in.
    const all = apply([byReference(), loaded(researcher), detailed('gh__issue', 'deploy', 'fetch')]).state;
    expect(registeredToolsInScope(all)).toEqual(registry.tools.slice(1));
    // A run that read the whole catalog lacks nothing.
    const whole = apply([withTools(), loaded(researcher)]).state;
    expect(undetailedToolsInScope(whole)).toEqual([]);
    expect(registeredToolsInScope(whole)).toEqual(registry.tools.slice(1));
  });

  it('settings: only what the policy needs', () => {
    const picked = policySettingsOf({ ...settings, ...({ model: 'x' } as object) } as PolicySettings);
    expect(picked).toEqual(settings);
  });
});

describe('the frozen bundle is the code the fixtures were recorded with', () => {
  it('is a readable webpack bundle', () => {
    const code = gunzipSync(
      fs.readFileSync(path.join(__dirname, 'fixtures', 'bundles', 'workflows-ba8b671.js.gz')),
    ).toString('utf8');
    expect(code).toContain(legacyWorkflowTypes.turn);
    expect(code).not.toContain('skill-limits');
  });
});

describe('checkpoint requests and decisions, rule by rule', () => {
  const open = (extra: Record<string, unknown> = {}, kind = 'approval') =>
    apply([started(), requested('request_human_approval', { checkpoint: 'c', summary: 'S', kind, ...extra })]).state;

  it.each([
    ['no input at all', null, 'request_human_approval needs an object input.'],
    [
      'a bad name',
      { checkpoint: 'Bad' },
      'checkpoint must be a name of lowercase letters, digits, _ and - (at most 64 characters).',
    ],
    [
      'no summary',
      { checkpoint: 'c', summary: ' ' },
      'summary must be a non-empty string telling the human what to decide.',
    ],
    ['an unknown kind', { checkpoint: 'c', summary: 's', kind: 'poll' }, 'kind must be "approval" or "question".'],
    ['params that are not an object', { checkpoint: 'c', summary: 's', params: [1] }, 'params must be an object.'],
    [
      'empty options',
      { checkpoint: 'c', summary: 's', options: [] },
      'options must be a non-empty array of non-empty strings.',
    ],
    ['repeated options', { checkpoint: 'c', summary: 's', options: ['a', 'a'] }, 'options must be distinct.'],
  ])('a request with %s is refused', (_name, input, message) => {
    expect(reducePolicy(apply([started()]).state, requested('request_human_approval', input)).verdict).toEqual({
      kind: 'refuse',
      message,
      code: 'refused',
    });
  });

  it('kind defaults to approval; options the model offers stand when the skill declares none', () => {
    const { verdict } = reducePolicy(
      apply([started()]).state,
      requested('request_human_approval', { checkpoint: 'c', summary: 's', options: ['x', 'y'] }),
    );
    expect(verdict).toMatchObject({
      kind: 'allow',
      ask: {
        kind: 'approval',
        options: ['x', 'y'],
        actions: ['approve', 'modify', 'cancel', 'choose'],
        params: null,
        paramsSchema: null,
      },
    });
  });

  it.each([
    [
      'a note with another action',
      { checkpointId: 'cp-1', action: 'approve', note: 'x' },
      'note goes with modify only.',
    ],
    [
      'an action the checkpoint does not take',
      { checkpointId: 'cp-1', action: 'answer', answer: 'x' },
      'An approval checkpoint with options accepts approve, modify, cancel, choose; not "answer".',
    ],
    [
      'a choice not offered',
      { checkpointId: 'cp-1', action: 'choose', choice: 'z' },
      'choice must be one of the options exactly as offered: ["x","y"].',
    ],
    [
      'an empty note',
      { checkpointId: 'cp-1', action: 'modify', note: ' ' },
      'note must be non-empty text of at most 4000 characters.',
    ],
    [
      'a note that is too long',
      { checkpointId: 'cp-1', action: 'modify', note: 'n'.repeat(4001) },
      'note must be non-empty text of at most 4000 characters.',
    ],
    [
      'overrides that are not an object',
      { checkpointId: 'cp-1', action: 'modify', overrides: [1] },
      'overrides must be an object of param names and values.',
    ],
    [
      'modify with nothing',
      { checkpointId: 'cp-1', action: 'modify', overrides: {} },
      "modify needs overrides (an object with at least one of the checkpoint's params), a note in words, or both.",
    ],
    [
      'overrides of a checkpoint without params',
      { checkpointId: 'cp-1', action: 'modify', overrides: { n: 1 } },
      'overrides.n is not allowed here; nothing may be set here.',
    ],
  ])('refuses %s', (_name, decision, message) => {
    const state = open({ options: ['x', 'y'] });
    const verdict = reducePolicy(state, {
      type: 'checkpoint.resolved',
      at: t0,
      decision: decision as CheckpointDecision,
    }).verdict;
    expect(verdict).toMatchObject({ kind: 'refuse', message: expect.stringContaining(message.replace(/\.$/, '')) });
  });

  it('a decision that is not an object has no id: not found (and is no decision at all)', () => {
    expect(
      reducePolicy(open(), { type: 'checkpoint.resolved', at: t0, decision: null as unknown as CheckpointDecision })
        .verdict,
    ).toMatchObject({ code: 'not_found' });
    expect(decisionProblems(open().open!, null as unknown as CheckpointDecision)).toEqual([
      { path: '', rule: 'type', message: 'The decision must be an object.' },
    ]);
  });

  it('a note with empty overrides is a note alone', () => {
    expect(
      reducePolicy(open(), resolved('cp-1', { action: 'modify', overrides: {}, note: 'shorter, please' })).verdict,
    ).toEqual({ kind: 'allow', result: { approved: true, note: 'shorter, please' } });
  });

  it('answers: empty ones are refused, others reach the model', () => {
    const state = open({}, 'question');
    expect(reducePolicy(state, resolved('cp-1', { action: 'answer', answer: '  ' })).verdict).toMatchObject({
      kind: 'refuse',
      message: 'answer must be a non-empty string.',
    });
    expect(reducePolicy(state, resolved('cp-1', { action: 'answer', answer: 'B' })).verdict).toMatchObject({
      kind: 'allow',
      result: { answer: 'B' },
    });
  });

  it('a checkpoint the skill declares is asked with the declared kind, whatever kind the model gives', () => {
    const { state, verdicts } = apply([
      started(),
      loaded(exam),
      ask('setup', { kind: 'question', params: { topics: ['a'] } }),
    ]);
    expect(verdicts[2]).toMatchObject({
      kind: 'allow',
      ask: { kind: 'approval', actions: ['approve', 'modify', 'cancel'] },
    });
    expect(reducePolicy(state, resolved('cp-1', { action: 'answer', answer: 'ok' })).verdict).toMatchObject({
      kind: 'refuse',
      code: 'invalid_decision',
    });
  });

  it('a declared approve-defaults checkpoint asked as a question still approves with the defaults when it expires', () => {
    const state = apply([
      started(),
      loaded(coach),
      requested('request_human_approval', { checkpoint: 'focus', summary: 'Depth?', kind: 'question' }),
    ]).state;
    expect(reducePolicy(state, expired()).verdict).toMatchObject({
      kind: 'allow',
      result: { approved: true, defaulted: true, params: { depth: 'deep' } },
    });
  });

  it('a routing checkpoint takes one of its routes or a cancel: an approval or an answer decides nothing', () => {
    const { state, verdicts } = apply(examUntilRoute());
    expect(verdicts[verdicts.length - 1]).toMatchObject({
      kind: 'allow',
      ask: { options: ['→ coach', 'Stop here'], actions: ['choose', 'cancel'] },
    });
    expect(reducePolicy(state, resolved('cp-2', { action: 'approve' })).verdict).toMatchObject({
      kind: 'refuse',
      problems: [{ path: 'action', rule: 'enum', allowed: ['choose', 'cancel'] }],
    });
    expect(reducePolicy(state, resolved('cp-2', { action: 'choose', choice: '→ coach' })).verdict).toMatchObject({
      kind: 'allow',
      result: { choice: '→ coach' },
    });
  });

  it('a modify that breaks a param the model proposed is reported on params, the override on overrides', () => {
    const state = apply([started(), loaded(exam), ask('setup', { params: { topics: ['a'] } })]).state;
    const broken = { ...state, open: { ...state.open!, params: { ...state.open!.params, count: 99 } } };
    const verdict = reducePolicy(broken, resolved('cp-1', { action: 'modify', overrides: { minutes: 0 } })).verdict;
    expect(verdict).toMatchObject({
      kind: 'refuse',
      problems: [
        { path: 'params.count', rule: 'maximum' },
        { path: 'overrides.minutes', rule: 'minimum' },
      ],
    });
  });
});

/**
 * Answers that arrive before their checkpoint is open (a workflow task that opened it was pushed, failed, and runs again
 * with the answer): let in only for the checkpoint the turn numbers next while none is open, and decided only if the
 * turn numbers it in the activation the answer came with.
 */
describe('answers ahead of their checkpoint', () => {
  const approve = (id: string) => ({ checkpointId: id, action: 'approve' }) as CheckpointDecision;
  const mirrored = (id: string, count: number): PolicyEvent => ({
    type: 'checkpoint.delegated',
    checkpoint: {
      id,
      name: 'q',
      kind: 'approval',
      params: null,
      paramsSchema: null,
      options: null,
      actions: ['approve', 'modify', 'cancel'],
    },
    checkpointCount: count,
  });
  /** Waiting for the model's first response; then the response opened cp-1; then cp-1 was answered and the model asked again. */
  const waiting = [started(), round()];
  const opened = [...waiting, ask('go')];
  const answeredThenWaiting = [...opened, resolved('cp-1', { action: 'approve' }), round()];

  it.each([
    {
      name: 'the next id while the turn waits for the model',
      given: waiting,
      decision: approve('cp-1'),
      ahead: { checkpointId: 'cp-1', round: 1, activation: 7 },
    },
    {
      name: 'the next id after an answered checkpoint',
      given: answeredThenWaiting,
      decision: approve('cp-2'),
      ahead: { checkpointId: 'cp-2', round: 1, activation: 7 },
    },
    {
      name: 'an id the turn has numbered (checked as it is)',
      given: answeredThenWaiting,
      decision: approve('cp-1'),
      ahead: null,
    },
    { name: 'an id beyond the next', given: waiting, decision: approve('cp-2'), ahead: null },
    { name: 'the next id while a checkpoint is open', given: opened, decision: approve('cp-2'), ahead: null },
    {
      name: 'the next id while a skill run below waits at one',
      given: [...waiting, mirrored('cp-1', 1)],
      decision: approve('cp-2'),
      ahead: null,
    },
    {
      name: 'an action no checkpoint takes',
      given: waiting,
      decision: { checkpointId: 'cp-1', action: 'accept' } as unknown as CheckpointDecision,
      ahead: null,
    },
    {
      name: 'a decision that is not an object',
      given: waiting,
      decision: null as unknown as CheckpointDecision,
      ahead: null,
    },
  ])('$name: $ahead', ({ given, decision, ahead }) => {
    expect(answerAheadOf(apply(given).state, decision, 7)).toEqual(ahead);
  });

  const ahead = answerAheadOf(apply(waiting).state, approve('cp-1'), 7)!;
  const wentOn = {
    kind: 'refuse',
    message: 'Checkpoint cp-1 cannot be answered: the turn went on without opening it.',
  };
  it.each([
    {
      name: 'nothing happened yet in its activation',
      given: waiting,
      now: { activation: 7, ended: false },
      outcome: { kind: 'wait' },
    },
    {
      name: 'the model response in its activation opened the checkpoint',
      given: opened,
      now: { activation: 7, ended: false },
      outcome: { kind: 'decide' },
    },
    {
      name: 'a skill run below opened it in its activation',
      given: [...waiting, mirrored('cp-1', 1)],
      now: { activation: 7, ended: false },
      outcome: { kind: 'decide' },
    },
    {
      name: 'a skill run below numbered it and more (the usual check then says it is not pending)',
      given: [...waiting, mirrored('cp-2', 2)],
      now: { activation: 7, ended: false },
      outcome: { kind: 'decide' },
    },
    {
      name: 'the turn ended without opening it',
      given: waiting,
      now: { activation: 7, ended: true },
      outcome: { kind: 'refuse', message: 'Checkpoint cp-1 cannot be answered: the turn ended without opening it.' },
    },
    {
      name: 'the turn asked the model again without opening it',
      given: [...waiting, round()],
      now: { activation: 7, ended: false },
      outcome: wentOn,
    },
    {
      name: 'a later activation, with nothing opened',
      given: waiting,
      now: { activation: 9, ended: false },
      outcome: wentOn,
    },
    {
      name: 'a later activation opened a checkpoint of that id: not the one the client was shown',
      given: opened,
      now: { activation: 9, ended: false },
      outcome: wentOn,
    },
  ])('$name: $outcome.kind', ({ given, now, outcome }) => {
    expect(answerAheadOutcome(apply(given).state, ahead, now)).toEqual(outcome);
  });

  it('once decided, the answer is checked like any other against the checkpoint that opened', () => {
    const state = apply([...waiting, ask('go', { kind: 'question' })]).state;
    expect(answerAheadOutcome(state, ahead, { activation: 7, ended: false })).toEqual({ kind: 'decide' });
    expect(reducePolicy(state, resolved('cp-1', { action: 'approve' })).verdict).toMatchObject({
      kind: 'refuse',
      code: 'invalid_decision',
    });
    expect(reducePolicy(state, resolved('cp-1', { action: 'answer', answer: 'yes' })).verdict).toMatchObject({
      kind: 'allow',
      result: { answer: 'yes' },
    });
  });
});

/**
 * Skill runs and structured outputs (issue 11): what a turn and a skill run may invoke, the depth cap, a skill run's
 * policy from its start, outputs handed in (submit_output) or given as a skill run's final answer, and checkpoints
 * of skill runs mirrored in the run that invoked them.
 */
describe('skill runs and structured outputs, event by event', () => {
  const helper = skill('helper', null, {
    output: [
      field('answer', { type: 'string' }),
      field('score', { type: 'integer', minimum: 0, maximum: 10, default: 5, required: false }),
    ],
  });
  const boss = skill('boss', 'checkpoint:go work', {
    children: ['helper'],
    output: [field('result', { type: 'integer' })],
    checkpoints: [
      checkpoint('go', {
        params: [
          field('topic', { type: 'string', required: false }),
          field('n', { type: 'integer', minimum: 1, required: false }),
        ],
      }),
    ],
  });
  const loner = skill('loner', null, { limits: { maxIterations: 1, timeoutMs: null } });
  const catalog = ['exam', 'coach', 'writer', 'timed', 'helper', 'boss', 'loner'];
  const turn = (extra: Partial<Extract<PolicyEvent, { type: 'turn.started' }>> = {}) => started({ catalog, ...extra });
  const runOf = (manifest: SkillManifest, depth = 1, params: Record<string, unknown> = {}) =>
    started({ catalog, invocation: { manifest, depth, checkpointBase: 3, params } });
  const invoke = (name: unknown, input: Record<string, unknown> = { task: 't' }) =>
    requested('invoke_skill', { skill: name, ...input });
  const submit = (input: unknown) => requested('submit_output', input);
  const answer = (text: string): PolicyEvent => ({ type: 'final.proposed', text });
  const bossDone = [turn(), loaded(boss), ask('go'), resolved('cp-1', { action: 'approve' }), stepped('boss', 'work')];
  const delegated = (id = 'cp-5', count = 5): PolicyEvent => ({
    type: 'checkpoint.delegated',
    checkpoint: {
      id,
      name: 'q',
      kind: 'question',
      params: null,
      paramsSchema: null,
      options: ['a', 'b'],
      actions: ['answer', 'cancel', 'choose'],
    },
    checkpointCount: count,
  });
  const invoked = (count: number): PolicyEvent => ({
    type: 'tool.finished',
    at: t0,
    call: call('invoke_skill', { skill: 'helper' }),
    outcome: { kind: 'skill.invoked', checkpointCount: count },
  });

  const table: Case[] = [
    // A skill run starts with its skill active, its plan at the start, its children, its depth and its parameters.
    {
      name: 'a skill run starts as its skill: active, its plan started, its children, depth and checkpoint numbering',
      given: [],
      when: runOf(boss, 2, { topic: 'graphs' }),
      verdict: { kind: 'allow' },
      state: {
        depth: 2,
        children: ['helper'],
        checkpointCount: 3,
        given: { skill: 'boss', params: { topic: 'graphs' } },
        active: { name: 'boss', children: ['helper'] },
        plan: { skill: 'boss' },
        clockSince: t0,
      },
    },
    {
      name: 'a turn started with parameters remembers them for its skill',
      given: [],
      when: turn({ given: { skill: 'boss', params: { n: 4 } } }),
      verdict: { kind: 'allow' },
      state: { depth: 0, children: null, given: { skill: 'boss', params: { n: 4 } } },
    },

    // invoke_skill in a turn
    {
      name: 'a turn may invoke any skill of the catalog',
      given: [turn()],
      when: invoke('helper'),
      verdict: { kind: 'allow' },
    },
    {
      name: 'an invocation without a skill name is left to the tool to refuse',
      given: [turn()],
      when: invoke(7),
      verdict: { kind: 'allow' },
    },
    {
      name: 'an unknown skill is refused, not counted',
      given: [turn()],
      when: invoke('helpr'),
      verdict: {
        kind: 'refuse',
        message:
          'No skill named "helpr". Did you mean "helper"? Known skills: exam, coach, writer, timed, helper, boss, loner.',
      },
      state: { violations: 0 },
    },
    {
      name: 'an unknown skill in an empty catalog',
      given: [started({ catalog: [] })],
      when: invoke('x'),
      verdict: { kind: 'refuse', message: 'No skill named "x". Known skills: none.' },
    },
    {
      name: "while a plan is in progress, its skill's children may be invoked",
      given: [turn(), loaded(boss)],
      when: invoke('helper'),
      verdict: { kind: 'allow' },
    },
    {
      name: 'while a plan is in progress, invoking another skill is a plan violation',
      given: [turn(), loaded(boss)],
      when: invoke('writer'),
      verdict: {
        kind: 'refuse',
        message:
          'Skill boss is in progress and its plan is not complete (allowed next: checkpoint go (request_human_approval with checkpoint "go")), so only its children (helper) may be invoked now.',
      },
      state: { violations: 1 },
    },
    {
      name: 'a plan resumed without its skill has no children to invoke',
      given: [turn({ carry: carryOf(apply([turn(), loaded(boss)]).state, {}) })],
      when: invoke('helper'),
      verdict: { kind: 'refuse', message: expect.stringContaining('so no skill may be invoked now.') },
    },
    {
      name: 'once the plan is complete any skill may be invoked again',
      given: bossDone,
      when: invoke('writer'),
      verdict: { kind: 'allow' },
    },
    {
      name: "after a routing choice only the routing skill's children may be invoked",
      given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: '→ coach' })],
      when: invoke('coach'),
      verdict: { kind: 'refuse', message: 'At route the human chose coach, so no skill may be invoked now.' },
    },
    {
      name: 'after "Stop here" nothing may be invoked',
      given: [...examUntilRoute(), resolved('cp-2', { action: 'choose', choice: 'Stop here' })],
      when: invoke('coach'),
      verdict: { kind: 'refuse', message: 'At route the human chose to stop, so no skill may be invoked now.' },
    },

    // invoke_skill in a skill run: children only, within the depth cap
    {
      name: 'a skill run may invoke its children',
      given: [runOf(boss)],
      when: invoke('helper'),
      verdict: { kind: 'allow' },
    },
    {
      name: 'a skill run invoking a skill that is not its child is a plan violation',
      given: [runOf(boss)],
      when: invoke('writer'),
      verdict: {
        kind: 'refuse',
        message: 'Skill boss may invoke only its children (helper); writer is not one of them.',
      },
      state: { violations: 1 },
    },
    {
      name: 'a skill run without children invokes nothing',
      given: [runOf(helper)],
      when: invoke('boss'),
      verdict: { kind: 'refuse', message: 'Skill helper invokes no other skills.' },
    },
    {
      name: 'the depth cap: a skill run at the deepest level invokes nothing, and trying counts',
      given: [runOf(boss, 2)],
      when: invoke('helper'),
      verdict: {
        kind: 'refuse',
        message:
          'Skill runs nest at most 2 deep (SKILLFLOW_MAX_SKILL_DEPTH); invoking helper here would run it at depth 3.',
      },
      state: { violations: 1 },
    },
    {
      name: 'invocations outside the scope end a skill run at the violation limit',
      given: [runOf(boss), invoke('writer'), invoke('writer')],
      when: invoke('writer'),
      verdict: {
        kind: 'end',
        ending: {
          status: 'failed',
          reason: 'plan_violations',
          error: {
            message:
              'The model broke the plan of skill boss at its start 3 times; the skill run was stopped. Remaining: checkpoint:go → work.',
          },
        },
      },
    },
    {
      name: 'violations in a skill run without a plan name the run',
      given: [runOf(helper), invoke('boss'), invoke('boss')],
      when: invoke('boss'),
      verdict: {
        kind: 'end',
        ending: {
          status: 'failed',
          reason: 'plan_violations',
          error: {
            message:
              'The model broke the rules of skill run helper 3 times; the skill run was stopped. Remaining: none.',
          },
        },
      },
    },
    {
      name: 'a skill run loads no other skill: a plan violation',
      given: [runOf(boss)],
      when: requested('load_skill', { name: 'writer' }),
      verdict: {
        kind: 'refuse',
        message:
          'A skill run follows its own skill only and loads no other; invoke one of its children (helper) with invoke_skill.',
      },
      state: { violations: 1 },
    },
    {
      name: 'a skill run without children is told it invokes none',
      given: [runOf(helper)],
      when: requested('load_skill', { name: 'writer' }),
      verdict: { kind: 'refuse', message: expect.stringContaining('it invokes no other skills.') },
    },
    {
      name: 'a skill run has no list_skills',
      given: [runOf(boss)],
      when: requested('list_skills'),
      verdict: {
        kind: 'refuse',
        message:
          'There is no tool named "list_skills". Available tools: load_subskill, read_file, invoke_skill, request_human_approval.',
      },
    },
    {
      name: 'a skill run at the depth cap is not offered invoke_skill',
      given: [runOf(boss, 2)],
      when: requested('list_skills'),
      verdict: {
        kind: 'refuse',
        message: expect.stringContaining('Available tools: load_subskill, read_file, request_human_approval.'),
      },
    },

    // Limits and budgets end a skill run in its own words.
    {
      name: 'a skill run at its max-iterations ends as a skill run',
      given: [runOf(loner), round()],
      when: round(),
      verdict: {
        kind: 'end',
        ending: {
          reason: 'skill_limit',
          error: {
            message:
              'Skill loner reached its limit of 1 model rounds (limits.max-iterations: 1); the skill run was stopped.',
          },
        },
      },
    },
    {
      name: 'a skill run out of rounds in its plan is stopped, its plan not kept',
      given: [runOf(boss), round(), round(), round(), round(), round()],
      when: round(),
      verdict: {
        kind: 'end',
        ending: {
          reason: 'max_rounds',
          error: {
            message:
              'The round budget ran out in skill boss; the skill run was stopped. Remaining: checkpoint:go → work.',
          },
        },
      },
    },

    // Parameters a caller gave are what the skill's checkpoints propose.
    {
      name: "a checkpoint proposes the parameters the caller gave over the model's, where it declares them",
      given: [runOf(boss, 1, { topic: 'graphs', other: true })],
      when: ask('go', { params: { topic: 'trees', n: 2 } }),
      verdict: { kind: 'allow', ask: { id: 'cp-4', params: { topic: 'graphs', n: 2 }, skill: 'boss', depth: 1 } },
    },
    {
      name: 'a given value the checkpoint would refuse is not proposed',
      given: [turn({ given: { skill: 'boss', params: { n: 0 } } }), loaded(boss)],
      when: ask('go', { params: { n: 2 } }),
      verdict: { kind: 'allow', ask: { params: { n: 2 }, skill: 'boss', depth: 0 } },
    },
    {
      name: 'parameters given for another skill are not proposed',
      given: [turn({ given: { skill: 'exam', params: { n: 9 } } }), loaded(boss)],
      when: ask('go', { params: { n: 2 } }),
      verdict: { kind: 'allow', ask: { params: { n: 2 } } },
    },
    {
      name: 'a free checkpoint asked with no skill active names no skill',
      given: [turn()],
      when: question('q'),
      verdict: { kind: 'allow', ask: { skill: null, depth: 0 } },
    },
    {
      name: 'a tool approval names the skill that grants the tool, or none at the root',
      given: [withTools({ tools: { ...registry, rootGrants: ['deploy'] } })],
      when: requested('deploy', { q: 'prod' }),
      verdict: { kind: 'allow', ask: { name: 'tool:deploy', skill: null, depth: 0 } },
    },
    {
      name: 'a tool approval in a skill names it',
      given: [withTools(), loaded(researcher)],
      when: requested('deploy', { q: 'prod' }),
      verdict: { kind: 'allow', ask: { skill: 'researcher', depth: 0 } },
    },

    // submit_output in a turn
    {
      name: 'submit_output of a valid output: accepted, defaults filled in',
      given: [turn(), loaded(helper)],
      when: submit({ output: { answer: 'yes' } }),
      verdict: { kind: 'allow', input: { output: { answer: 'yes', score: 5 } } },
      state: { outputs: { helper: { given: true, corrections: 0 } } },
    },
    {
      name: 'submit_output of an invalid output: refused with every problem and the schema, once',
      given: [turn(), loaded(helper)],
      when: submit({ output: { score: 11 } }),
      verdict: {
        kind: 'refuse',
        message: expect.stringMatching(
          /^The output of skill helper was not accepted: output.score is 11, above the maximum 10; output.answer is required\. Call submit_output again .*"required":\["answer"\]/,
        ),
      },
      state: { outputs: { helper: { given: false, corrections: 1 } }, violations: 0 },
    },
    {
      name: 'a second invalid output ends the turn: invalid_output',
      given: [turn(), loaded(helper), submit({ output: {} })],
      when: submit({}),
      verdict: {
        kind: 'end',
        ending: {
          status: 'failed',
          reason: 'invalid_output',
          error: {
            code: 'invalid_output',
            message:
              'Skill helper declares a structured output, and its output was still invalid (output is required) after one correction; the turn was stopped.',
          },
        },
      },
    },
    {
      name: 'submit_output with no skill loaded',
      given: [turn()],
      when: submit({ output: {} }),
      verdict: { kind: 'refuse', message: 'No skill is loaded: there is no output to submit.' },
    },
    {
      name: 'submit_output for a skill without an output',
      given: [turn(), loaded(writer)],
      when: submit({ output: {} }),
      verdict: { kind: 'refuse', message: 'Skill writer declares no output: there is nothing to submit.' },
    },
    {
      name: 'a skill run has no submit_output: its answer is its output',
      given: [runOf(helper)],
      when: submit({ output: {} }),
      verdict: { kind: 'refuse', message: expect.stringContaining('your final answer is the output') },
    },

    // A plan's final answer in a turn needs the output its skill declares.
    {
      name: 'a complete plan whose skill declares an output: the final answer waits for submit_output, once',
      given: bossDone,
      when: answer('All done.'),
      verdict: {
        kind: 'refuse',
        message: expect.stringMatching(
          /^Skill boss declares a structured output and it has not been handed in\. Call submit_output/,
        ),
      },
      state: { outputs: { boss: { corrections: 1 } }, violations: 0 },
    },
    {
      name: 'a second final answer without it ends the turn: invalid_output',
      given: [...bossDone, answer('All done.')],
      when: answer('Really done.'),
      verdict: {
        kind: 'end',
        ending: {
          reason: 'invalid_output',
          error: {
            message:
              'Skill boss declares a structured output, and it was never handed in with submit_output after one correction; the turn was stopped.',
          },
        },
      },
    },
    {
      name: 'with the output handed in, the final answer stands',
      given: [...bossDone, submit({ output: { result: 3 } })],
      when: answer('All done.'),
      verdict: { kind: 'allow' },
      without: ['output'],
    },
    {
      name: 'a skill without a plan needs no output in a turn',
      given: [turn(), loaded(helper)],
      when: answer('Here.'),
      verdict: { kind: 'allow' },
    },
    {
      name: 'a plan whose skill declares no output',
      given: [started(), loaded(timed), stepped('timed', 'intro'), stepped('timed', 'work'), stepped('timed', 'wrap')],
      when: answer('x'),
      verdict: { kind: 'allow' },
    },
    { name: 'a final answer that carries no text', given: [turn()], when: final, verdict: { kind: 'allow' } },

    // A skill run's final answer is its output.
    {
      name: "a skill run's JSON answer is its output, validated and defaulted",
      given: [runOf(helper)],
      when: answer('{"answer": "42"}'),
      verdict: { kind: 'allow', output: { answer: '42', score: 5 } },
    },
    {
      name: 'a fenced json block counts (the last one)',
      given: [runOf(helper)],
      when: answer('Here:\n```json\n{"answer": "no"}\n```\nand\n```json\n{"answer": "yes"}\n```'),
      verdict: { kind: 'allow', output: { answer: 'yes' } },
    },
    {
      name: 'an answer that is not JSON gets one correction',
      given: [runOf(helper)],
      when: answer('The answer is 42.'),
      verdict: {
        kind: 'refuse',
        message: expect.stringMatching(
          /^Your final answer is the output of skill helper and it does not match its Output schema: the answer is not a JSON object\. Answer again/,
        ),
      },
    },
    {
      name: 'a broken JSON object is not JSON',
      given: [runOf(helper)],
      when: answer('{"answer": '),
      verdict: { kind: 'refuse', message: expect.stringContaining('the answer is not a JSON object') },
    },
    {
      name: 'a second invalid answer ends the skill run, keeping the answer',
      given: [runOf(helper), answer('nope')],
      when: answer('{"answer": 1}'),
      verdict: {
        kind: 'end',
        ending: {
          status: 'failed',
          reason: 'invalid_output',
          output: '{"answer": 1}',
          error: {
            message:
              'Skill helper declares a structured output, and its final answer was still not valid output (output.answer is a number, not a string) after one correction; the skill run was stopped.',
          },
        },
      },
    },
    {
      name: 'a skill run without an output answers in text',
      given: [runOf(loner)],
      when: answer('plain'),
      verdict: { kind: 'allow' },
      without: ['output'],
    },

    // Checkpoints of skill runs, mirrored here.
    {
      name: "a skill run's checkpoint is mirrored, and numbering goes on from it",
      given: [turn()],
      when: delegated(),
      verdict: { kind: 'allow' },
      state: { delegated: { id: 'cp-5' }, checkpointCount: 5 },
    },
    {
      name: 'numbering never goes back',
      given: [turn(), question('q1'), resolved('cp-1', { action: 'answer', answer: 'a' }), delegated('cp-5', 5)],
      when: delegated('cp-5', 0),
      verdict: { kind: 'allow' },
      state: { checkpointCount: 5 },
    },
    {
      name: 'an answer to the mirrored checkpoint is passed down, once',
      given: [turn(), delegated()],
      when: resolved('cp-5', { action: 'choose', choice: 'b' }),
      verdict: { kind: 'allow', forward: true },
      state: { delegated: null },
    },
    {
      name: 'an answer the mirrored checkpoint does not take is refused here',
      given: [turn(), delegated()],
      when: resolved('cp-5', { action: 'approve' }),
      verdict: {
        kind: 'refuse',
        code: 'invalid_decision',
        message: 'A question checkpoint with options accepts answer, cancel, choose; not "approve".',
      },
      state: { delegated: { id: 'cp-5' } },
    },
    {
      name: 'an answer to one of its earlier checkpoints: no longer pending',
      given: [turn(), delegated(), resolved('cp-5', { action: 'cancel' })],
      when: resolved('cp-5', { action: 'cancel' }),
      verdict: { kind: 'refuse', code: 'not_pending' },
    },
    {
      // A run asked to cancel keeps showing the checkpoint until it ends (cancel-keeps-mirrored-checkpoint): its policy does not.
      name: 'a mirrored checkpoint its skill run cleared (cancelled with the turn): an answer to it is no longer pending',
      given: [turn(), delegated(), { type: 'checkpoint.delegated', checkpoint: null, checkpointCount: 5 }],
      when: resolved('cp-5', { action: 'choose', choice: 'b' }),
      verdict: { kind: 'refuse', code: 'not_pending' },
    },
    {
      name: 'a finished skill run leaves its numbering behind',
      given: [turn(), delegated('cp-7', 7)],
      when: invoked(9),
      verdict: { kind: 'allow' },
      state: { delegated: null, checkpointCount: 9 },
    },
    {
      name: "the next checkpoint of the turn is numbered after the skill run's",
      given: [turn(), invoked(9), round()],
      when: question('q'),
      verdict: { kind: 'allow', ask: { id: 'cp-10' } },
    },
  ];

  it.each(table)('$name', ({ given, when, verdict, without, state }) => {
    const before = apply(given).state;
    const after = reducePolicy(before, when);
    expect(after.verdict).toMatchObject(verdict);
    for (const key of without ?? []) expect(after.verdict).not.toHaveProperty(key);
    if (state) expect(after.state).toMatchObject(state);
  });

  it('what a run may call: a turn everything; a skill run its own tools, invoke_skill while it may nest', () => {
    expect(mayInvoke(apply([turn()]).state)).toBe(true);
    expect(mayInvoke(apply([runOf(boss, 1)]).state)).toBe(true);
    expect(mayInvoke(apply([runOf(helper, 1)]).state)).toBe(false);
    expect(mayInvoke(apply([runOf(boss, 2)]).state)).toBe(false);
    expect(toolsInScope(apply([turn()]).state)).toEqual([
      'load_skill',
      'load_subskill',
      'read_file',
      'list_skills',
      'invoke_skill',
      'submit_output',
      'request_human_approval',
    ]);
  });

  it('settings of sessions created before the depth cap existed get its default; manifests of older code activate without outputs or children', () => {
    const {
      maxSkillDepth: _dropped,
      maxInvocationsPerResponse: _perResponse,
      maxInvocationsPerTurn: _perTurn,
      ...older
    } = settings;
    expect(policySettingsOf(older as PolicySettings)).toMatchObject({
      maxSkillDepth: 3,
      maxInvocationsPerResponse: 5,
      maxInvocationsPerTurn: 20,
    });
    const old = {
      ...snapshotOf(boss),
      manifest: { ...boss, output: undefined, children: undefined } as unknown as SkillManifest,
    };
    const carry = { ...carryOf(apply([turn(), loaded(boss)]).state, {})!, snapshots: [old] };
    expect(apply([turn({ carry })]).state.active).toMatchObject({ name: 'boss', output: [], children: [] });
  });
});

describe('spending bounds: the token budget handed down and reserved, invoke_skill calls capped (issue 24.6)', () => {
  const boss = skill('boss', 'work', { children: ['helper'] });
  const catalog = ['helper', 'boss'];
  const turn = (extra: Partial<Extract<PolicyEvent, { type: 'turn.started' }>> = {}) => started({ catalog, ...extra });
  const runOf = (
    manifest: SkillManifest,
    extra: Partial<Extract<PolicyEvent, { type: 'turn.started' }>> = {},
    invocationsLeft?: number,
  ) =>
    started({
      catalog,
      invocation: {
        manifest,
        depth: 1,
        checkpointBase: 0,
        params: {},
        ...(invocationsLeft !== undefined ? { invocationsLeft } : {}),
      },
      ...extra,
    });
  const invoke = (tokens?: number): PolicyEvent => ({
    type: 'tool.requested',
    at: t0,
    call: call('invoke_skill', { skill: 'helper', task: 't' }),
    ...(tokens !== undefined ? { tokens } : {}),
  });
  const roundOf = (tokens: number, estimate?: number): PolicyEvent => ({
    type: 'round.starting',
    at: t0,
    tokens,
    ...(estimate !== undefined ? { estimate } : {}),
  });
  const reserved = (reservation: Reservation): PolicyEvent => ({ type: 'tokens.reserved', reservation });
  const returned = (runs?: number): PolicyEvent => ({
    type: 'tool.finished',
    at: t0,
    call: call('invoke_skill', { skill: 'helper' }),
    outcome: { kind: 'skill.invoked', checkpointCount: 0, ...(runs !== undefined ? { runs } : {}) },
  });
  const unstarted = (input: unknown): PolicyEvent => ({
    type: 'tool.finished',
    at: t0,
    call: call('invoke_skill', input),
    outcome: { kind: 'skill.unstarted' },
  });
  const perResponse =
    'At most 2 invoke_skill calls run per model response (SKILLFLOW_MAX_INVOCATIONS_PER_RESPONSE); helper was not invoked. Call it again in a later response if you still need it.';
  const perTurn =
    "This turn has made its 3 invoke_skill calls, its skill runs' included (SKILLFLOW_MAX_INVOCATIONS_PER_TURN); helper was not invoked. Go on without it.";

  const table: Case[] = [
    // Reservations before each round of a run with a budget.
    {
      name: 'a round reserves its estimate, within what the run has left',
      given: [turn({ tokenBudget: 1_000 })],
      when: roundOf(100, 300),
      verdict: { kind: 'allow', reserve: { tokens: 300, left: 900 } },
    },
    {
      name: 'a round never reserves more than the run has left',
      given: [turn({ tokenBudget: 1_000 })],
      when: roundOf(400, 900),
      verdict: { kind: 'allow', reserve: { tokens: 600, left: 600 } },
    },
    {
      name: 'a round without an estimate reserves a token',
      given: [turn({ tokenBudget: 1_000 })],
      when: roundOf(0),
      verdict: { kind: 'allow', reserve: { tokens: 1, left: 1_000 } },
    },
    {
      name: 'a round inside a plan reserves too',
      given: [turn({ tokenBudget: 1_000 }), loaded(boss)],
      when: roundOf(0, 50),
      verdict: { kind: 'allow', reserve: { tokens: 50 } },
    },
    {
      name: 'without a budget a round reserves nothing',
      given: [turn()],
      when: roundOf(100, 300),
      verdict: { kind: 'allow' },
      without: ['reserve'],
    },
    {
      name: 'a granted reservation lets the round go on',
      given: [turn({ tokenBudget: 1_000 }), roundOf(0, 10)],
      when: reserved({ granted: true, tokens: 10 }),
      verdict: { kind: 'allow' },
    },
    {
      name: "a refused reservation ends the turn before its model call: other turns used up the user's day",
      given: [turn({ tokenBudget: 1_000 }), roundOf(0, 10)],
      when: reserved({ granted: false, available: 0 }),
      verdict: {
        kind: 'end',
        ending: {
          status: 'failed',
          reason: 'token_budget',
          error: {
            code: 'token_budget',
            message:
              "The user's daily token budget (SKILLFLOW_USER_DAILY_TOKENS) is used up, by this turn and the user's other turns running at the same time; the turn was stopped before its next model call. The budget renews at 00:00 UTC.",
          },
        },
      },
    },
    {
      name: "a refused reservation keeps a turn's unfinished plan for the next turn",
      given: [turn({ tokenBudget: 1_000 }), loaded(boss), roundOf(0, 10)],
      when: reserved({ granted: false, available: -5 }),
      verdict: {
        kind: 'end',
        ending: {
          reason: 'token_budget',
          error: {
            message: expect.stringMatching(/The plan is kept for the session's next turn\. Remaining: work\.$/),
          },
        },
      },
    },
    {
      name: 'a refused reservation stops a skill run, whose plan is not carried',
      given: [runOf(boss, { tokenBudget: 500 }), roundOf(0, 10)],
      when: reserved({ granted: false, available: 0 }),
      verdict: {
        kind: 'end',
        ending: {
          reason: 'token_budget',
          error: {
            message: expect.stringMatching(
              /by this skill run and .*; the skill run was stopped before its next model call\. The budget renews at 00:00 UTC\.$/,
            ),
          },
        },
      },
    },
    {
      name: 'a skill run stops before its next round once its tokens reach what its invoker had left',
      given: [runOf(boss, { tokenBudget: 500 }), roundOf(0, 10)],
      when: roundOf(520),
      verdict: {
        kind: 'end',
        ending: {
          reason: 'token_budget',
          error: {
            message:
              "The skill run used 520 model tokens, reaching the 500 its invoker had left of the user's daily budget when it started (SKILLFLOW_USER_DAILY_TOKENS); it was stopped before its next model call. The budget renews at 00:00 UTC.",
          },
        },
      },
    },

    // invoke_skill calls: counted per response and per turn, with what the skill run may spend handed down.
    {
      name: 'an invocation within the caps is counted and hands down what is left',
      given: [turn(), roundOf(0)],
      when: invoke(),
      verdict: { kind: 'allow', handDown: { invocations: 2, tokens: null } },
      state: { invocations: { left: 2, inResponse: 1 } },
    },
    {
      name: 'with a budget, the skill run gets the tokens the run has left',
      given: [turn({ tokenBudget: 1_000 }), roundOf(0)],
      when: invoke(350),
      verdict: { kind: 'allow', handDown: { invocations: 2, tokens: 650 } },
    },
    {
      name: 'an invocation past the per-response cap is refused, not counted as a violation',
      given: [turn(), roundOf(0), invoke(), invoke()],
      when: invoke(),
      verdict: { kind: 'refuse', message: perResponse },
      state: { violations: 0, invocations: { left: 1, inResponse: 2 } },
    },
    {
      name: 'the next response may invoke again',
      given: [turn(), roundOf(0), invoke(), invoke(), roundOf(0)],
      when: invoke(),
      verdict: { kind: 'allow' },
      state: { invocations: { left: 0, inResponse: 1 } },
    },
    {
      name: 'an invocation past the per-turn cap is refused',
      given: [turn(), roundOf(0), invoke(), invoke(), roundOf(0), invoke(), roundOf(0)],
      when: invoke(),
      verdict: { kind: 'refuse', message: perTurn },
    },
    {
      name: 'the runs a skill run started count against the turn',
      given: [turn(), roundOf(0), invoke()],
      when: returned(1),
      verdict: { kind: 'allow' },
      state: { invocations: { left: 1 } },
    },
    {
      name: 'a skill run that reports no runs counts as none',
      given: [turn(), roundOf(0), invoke()],
      when: returned(),
      verdict: { kind: 'allow' },
      state: { invocations: { left: 2 } },
    },
    {
      name: 'the count never goes below zero',
      given: [turn(), roundOf(0), invoke(), returned(9), roundOf(0)],
      when: invoke(),
      verdict: { kind: 'refuse', message: perTurn },
      state: { invocations: { left: 0 } },
    },
    {
      name: 'a skill run makes only the calls its invoker left it',
      given: [runOf(boss, {}, 0), roundOf(0)],
      when: invoke(),
      verdict: { kind: 'refuse', message: perTurn },
    },
    {
      name: 'a skill run an older invoker started gets the per-turn cap',
      given: [runOf(boss), roundOf(0)],
      when: invoke(),
      verdict: { kind: 'allow', handDown: { invocations: 2 } },
    },
    {
      name: 'no skill run starts once the run has used its tokens',
      given: [turn({ tokenBudget: 1_000 }), roundOf(0)],
      when: invoke(1_000),
      verdict: {
        kind: 'refuse',
        message:
          "The model tokens this turn was given of the user's daily budget are used up (SKILLFLOW_USER_DAILY_TOKENS); helper was not invoked.",
      },
    },
    {
      name: 'nor in a skill run',
      given: [runOf(boss, { tokenBudget: 10 }), roundOf(0)],
      when: invoke(10),
      verdict: { kind: 'refuse', message: /^The model tokens this skill run was given/ },
    },
    {
      name: 'an invocation whose input the tool refused started nothing: the call is given back',
      given: [turn(), roundOf(0), invoke(), invoke()],
      when: unstarted({ skill: 'helper', task: '' }),
      verdict: { kind: 'allow' },
      state: { invocations: { left: 2, inResponse: 1 } },
    },
    {
      name: 'an invocation without a skill name was never counted',
      given: [turn(), roundOf(0), invoke()],
      when: unstarted({ task: 't' }),
      verdict: { kind: 'allow' },
      state: { invocations: { left: 2, inResponse: 1 } },
    },
  ];

  it.each(table)('$name', ({ given, when, verdict, without, state }) => {
    const before = apply(given).state;
    const after = reducePolicy(before, when);
    expect(after.verdict).toMatchObject(verdict);
    for (const key of without ?? []) expect(after.verdict).not.toHaveProperty(key);
    if (state) expect(after.state).toMatchObject(state);
  });
});
