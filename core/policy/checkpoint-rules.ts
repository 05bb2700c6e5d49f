import {
  allowedActions,
  checkpointIdOf,
  checkpointNumberOf,
  decisionProblems,
  routingActions,
  decisionResult,
  parseCheckpointRequest,
  type CheckpointDecision,
} from '../checkpoints';
import { schemaOfValues, validateJson, type JsonSchema } from '../json-validator';
import { valueProblem } from '../skills/field-specs';
import { fieldsToJsonSchema } from '../skills/json-schema';
import type { CheckpointSpec, OnTimeout } from '../skills/types';
import type { ToolSpec } from '../tools/types';
import { startClock, stopClock } from './clock';
import { cancelledByUserEnd, expiredEnd } from './endings';
import { checkpointRefusal, checkpointSpec, namesCheckpoint, passCheckpoint } from './plan';
import type { DelegatedCheckpoint, OpenCheckpoint, PolicyState, Reduction, ToolCall } from './types';
import { allow, refuse, violation } from './verdicts';

/**
 * Human checkpoints: whether one may be asked now, with which params, options and actions, how long it waits and
 * what its expiry does; and what a decision means for the plan and for the model.
 */

interface Policy {
  ttlMs: number | null;
  onTimeout: OnTimeout;
}

/** The checkpoint the skill declares under this name: the active skill's, else the plan's. */
function declaredSpec(state: PolicyState, name: string): CheckpointSpec | undefined {
  return (state.active?.checkpoints ?? state.plan?.checkpoints ?? []).find((spec) => spec.name === name);
}

/** How long it waits and what then: the skill's word for this checkpoint, else for its free ones, else the configuration. */
function policyOf(state: PolicyState, name: string, spec: CheckpointSpec | undefined, at: number): Policy {
  const defaults: Policy = { ttlMs: state.settings.checkpointTtlMs, onTimeout: state.settings.checkpointOnTimeout };
  const { plan } = state;
  if (spec) return { ttlMs: spec.ttlMs, onTimeout: spec.onTimeout };
  // A skill that says nothing about its free checkpoints leaves them to the configuration.
  const free = state.active ? (state.active.freeCheckpoints ?? defaults) : defaults;
  if (!plan?.deadline || plan.deadlinePassed || namesCheckpoint(plan, name)) return free;
  const untilDeadline = Math.max(0, plan.deadline.atMs - at);
  return free.ttlMs !== null && free.ttlMs <= untilDeadline ? free : { ttlMs: untilDeadline, onTimeout: 'skip' };
}

/** A request_human_approval call: refused (a violation when the plan forbids it), or a checkpoint to open. */
export function onCheckpointRequested(state: PolicyState, call: ToolCall, at: number): Reduction {
  const request = parseCheckpointRequest(call.input);
  if (typeof request === 'string') return refuse(state, request);
  const name = request.checkpoint;
  const refusal = state.plan ? checkpointRefusal(state.plan, name) : null;
  if (refusal) return violation(state, refusal);

  const spec = declaredSpec(state, name);
  let params = request.params ?? null;
  let paramsSchema: JsonSchema | null = params ? schemaOfValues(params) : null;
  if (spec && spec.params.length > 0) {
    paramsSchema = fieldsToJsonSchema(spec.params);
    const proposed = { ...(params ?? {}), ...givenFor(state, spec) };
    const checked = validateJson(proposed, paramsSchema, { path: 'params', applyDefaults: true });
    if (!checked.ok) {
      const listed = checked.problems.map((problem) => problem.message).join('; ');
      return refuse(
        state,
        `Checkpoint ${name} was not asked: ${listed}. Its params, as JSON Schema: ${JSON.stringify(paramsSchema)}`,
        'refused',
        checked.problems,
      );
    }
    params = checked.value as Record<string, unknown>;
  }
  const routes = checkpointSpec(state.plan, name)?.routes ?? [];
  const options = routes.length > 0 ? routes.map((route) => route.label) : (request.options ?? null);
  const policy = policyOf(state, name, spec, at);
  const declaredKind = spec !== undefined;
  const kind = declaredKind ? spec.kind : request.kind;
  const open: OpenCheckpoint = {
    id: checkpointIdOf(state.checkpointCount + 1),
    name,
    kind,
    params,
    paramsSchema,
    options,
    actions: declaredKind && routes.length > 0 ? routingActions : allowedActions({ kind, options }),
    onTimeout: policy.onTimeout,
  };
  const next = stopClock({ ...state, checkpointCount: state.checkpointCount + 1, open }, at);
  return allow(next, {
    ask: {
      ...open,
      summary: request.summary,
      ttlMs: policy.ttlMs,
      skill: state.active?.name ?? null,
      depth: state.depth,
    },
  });
}

/**
 * The parameters a caller gave the active skill (the API's typed start, invoke_skill) that this checkpoint declares:
 * the checkpoint proposes them, whatever the model proposed, and the human still decides.
 */
function givenFor(state: PolicyState, spec: CheckpointSpec): Record<string, unknown> {
  const { given } = state;
  if (!given || given.skill !== state.active?.name) return {};
  const fits = (param: CheckpointSpec['params'][number]) =>
    param.name in given.params && valueProblem(given.params[param.name], param) === null;
  return Object.fromEntries(spec.params.filter(fits).map((param) => [param.name, given.params[param.name]]));
}

/** A skill run below this one opened a checkpoint, or closed it: answers to it are checked here and passed down. */
export function onCheckpointDelegated(
  state: PolicyState,
  checkpoint: DelegatedCheckpoint | null,
  checkpointCount: number,
): Reduction {
  return allow({ ...state, delegated: checkpoint, checkpointCount: Math.max(state.checkpointCount, checkpointCount) });
}

/** The checkpoint name of a tool call's approval: never a plan checkpoint's (those are snake_case). */
export const toolApprovalName = (tool: string) => `tool:${tool}`;

/**
 * A tool that needs a human's approval: a checkpoint whose params are the call's input and whose params schema is the
 * tool's input schema (so a modified input is validated again). It waits as a free checkpoint of the active skill
 * would; when it expires, the tool does not run and the turn goes on.
 */
export function onToolApprovalNeeded(
  state: PolicyState,
  call: ToolCall,
  spec: ToolSpec,
  input: Record<string, unknown>,
  at: number,
): Reduction {
  const name = toolApprovalName(spec.name);
  const open: OpenCheckpoint = {
    id: checkpointIdOf(state.checkpointCount + 1),
    name,
    kind: 'approval',
    params: input,
    paramsSchema: spec.inputSchema,
    options: null,
    actions: allowedActions({ kind: 'approval', options: null }),
    onTimeout: 'skip',
    tool: { name: spec.name, callId: call.id },
  };
  const { ttlMs } = policyOf(state, name, undefined, at);
  const from = spec.server ? ` (from MCP server ${spec.server})` : '';
  const summary =
    `The assistant wants to run the tool ${spec.name}${from} with the input in params. ${spec.description.split('\n')[0]} ` +
    'Approve to run it as proposed, modify to change its input, or cancel to skip it.';
  const next = stopClock({ ...state, checkpointCount: state.checkpointCount + 1, open }, at);
  return allow(next, { ask: { ...open, summary, ttlMs, skill: state.active?.name ?? null, depth: state.depth } });
}

/** A tool approval settled: run the tool with the approved input, or tell the model it did not run. */
function onToolApprovalResolved(
  state: PolicyState,
  open: OpenCheckpoint,
  decision: CheckpointDecision,
  at: number,
): Reduction {
  const tool = open.tool!.name;
  const base = startClock({ ...state, open: null }, at);
  if (decision.action === 'cancel') {
    const result = {
      cancelled: true,
      ran: false,
      note: `The human declined: ${tool} did not run. Go on without it, and tell the user if it matters.`,
    };
    return allow(base, { result });
  }
  const overrides = decision.overrides ?? {};
  const input = { ...open.params, ...overrides };
  const changes = Object.keys(overrides).length > 0 ? ` changed its input to ${JSON.stringify(input)}` : '';
  const said = decision.note ? `${changes ? ' and' : ''} said: ${decision.note}` : '';
  const note = changes || said ? `Before ${tool} ran, the human${changes}${said}` : undefined;
  return allow(base, { input, result: decisionResult(decision), ...(note ? { note } : {}) });
}

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** Why this decision cannot be taken (unknown or settled checkpoint, or a decision its rules refuse), or null. */
function decisionRefusal(state: PolicyState, decision: CheckpointDecision): Reduction | null {
  const id = decision?.checkpointId;
  const number = checkpointNumberOf(id);
  if (number === null || number > state.checkpointCount) {
    return refuse(state, `This turn has no checkpoint ${JSON.stringify(id)}.`, 'not_found');
  }
  if (state.open?.id !== id) return refuse(state, `Checkpoint ${id} is no longer pending.`, 'not_pending');
  const problems = decisionProblems(state.open, decision);
  if (problems.length === 0) return null;
  return refuse(state, sentence(problems.map((problem) => problem.message).join('; ')), 'invalid_decision', problems);
}

/** The plan moves past a named checkpoint once a human (or its expiry policy) has settled it. */
function settle(
  state: PolicyState,
  open: OpenCheckpoint,
  decision: CheckpointDecision | 'expired',
  effective: Record<string, unknown>,
  at: number,
): PolicyState {
  const base = startClock({ ...state, open: null }, at);
  if (!base.plan || !namesCheckpoint(base.plan, open.name)) return base;
  const passed = passCheckpoint(base.plan, open.name, decision, effective, at);
  return { ...base, plan: passed.plan, ...(passed.route ? { route: passed.route } : {}) };
}

export function onCheckpointResolved(state: PolicyState, decision: CheckpointDecision, at: number): Reduction {
  const { delegated } = state;
  if (delegated && decision?.checkpointId === delegated.id) {
    const problems = decisionProblems(delegated, decision);
    if (problems.length > 0)
      return refuse(
        state,
        sentence(problems.map((problem) => problem.message).join('; ')),
        'invalid_decision',
        problems,
      );
    return allow({ ...state, delegated: null }, { forward: true });
  }
  const refused = decisionRefusal(state, decision);
  if (refused) return refused;
  const open = state.open!;
  const humanDecided = { ...state, roundsSinceHuman: 0 };
  if (open.tool) return onToolApprovalResolved(humanDecided, open, decision, at);
  if (decision.action === 'cancel') {
    const base = startClock({ ...humanDecided, open: null }, at);
    const next = namesCheckpoint(base.plan, open.name) ? { ...base, plan: null, route: null } : base;
    return { state: next, verdict: { ...cancelledByUserEnd, result: decisionResult(decision) } };
  }
  const effective = { ...(open.params ?? {}), ...(decision.overrides ?? {}) };
  return allow(settle(humanDecided, open, decision, effective, at), { result: decisionResult(decision) });
}

const skippedResult = {
  skipped: true,
  note: 'Nobody answered in time. Go on without this decision, and tell the user it was skipped.',
};

export function onCheckpointExpired(state: PolicyState, at: number): Reduction {
  const open = state.open;
  if (!open) return refuse(state, 'No checkpoint is pending.', 'not_pending');
  if (open.tool) {
    const result = {
      skipped: true,
      ran: false,
      note: `Nobody approved the call in time: ${open.tool.name} did not run. Go on without it, and tell the user.`,
    };
    return allow(startClock({ ...state, open: null }, at), { result });
  }
  if (open.onTimeout === 'cancel') return { state: { ...state, open: null }, verdict: expiredEnd(open.name) };
  if (open.onTimeout === 'approve-defaults' && open.kind === 'approval') {
    const params = withDefaults(open.params ?? {}, open.paramsSchema);
    const result = {
      approved: true,
      defaulted: true,
      params,
      note: 'Nobody answered in time: the proposed params stand, with the declared defaults for any left out.',
    };
    return allow(settle(state, open, 'expired', params, at), { result });
  }
  return allow(settle(state, open, 'expired', open.params ?? {}, at), { result: skippedResult });
}

function withDefaults(params: Record<string, unknown>, schema: JsonSchema | null): Record<string, unknown> {
  return schema ? (validateJson(params, schema, { applyDefaults: true }).value as Record<string, unknown>) : params;
}
