import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { checkpointToolDefinition } from '../core/checkpoints';
import { emptyToolCatalog, engineToolSpec } from '../core/tools';
import { migratePlanCarry, pinnedSkillsOf, policySettingsOf, rulePatches, type PolicyRules } from '../core/policy';
import { basePrompt } from '../core/prompts';
import { buildSystemPrompt } from '../core/skills';
import { sessionWorkflowId, type TurnError, type TurnInput, type TurnResult } from '../core/turn';
import { appendUserText, runAgentLoop } from './agent-loop';
import { decisionRejection } from './checkpoint-desk';
import { answerCheckpointUpdate, checkpointDecisionSignal, turnEndedSignal, turnEventsQuery, turnStateQuery } from './definitions';
import { registeredTools } from './registered-tools';
import { preloadSkill, skillTools } from './skill-tools';
import type { TurnTool } from './tool-types';
import { TurnRun } from './turn-run';

const { skillCatalog, toolCatalog } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

/**
 * One chat turn: the agent loop over a fresh message list (the session's earlier text and the new message), with
 * the skill tools, the checkpoint tool and the worker's registered tools, ruled by the turn's policy (core/policy).
 * The turn returns what the session keeps.
 */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const run = new TurnRun(input);
  setHandler(turnStateQuery, () => run.state);
  setHandler(turnEventsQuery, (afterOffset: number) => run.log.after(afterOffset));
  // A human's decision on the pending checkpoint: kept for askHuman, which is waiting for it. The update answers the
  // API with the reason for a rejection; an invalid signal (operators, by hand) is logged and ignored.
  setHandler(
    answerCheckpointUpdate,
    (decision) => {
      run.decision = decision;
      return { checkpointId: decision.checkpointId, action: decision.action };
    },
    {
      validator: (decision) => {
        const rejection = decisionRejection(run, decision);
        if (rejection) throw rejection;
      },
    },
  );
  setHandler(checkpointDecisionSignal, (decision) => {
    const rejection = decisionRejection(run, decision);
    if (rejection) log.warn('Ignored an invalid checkpoint decision signal', { problem: rejection.message, decision });
    else run.decision = decision;
  });

  const result = await runTurn(run);
  await CancellationScope.nonCancellable(() => tellSession(input, result));
  run.publishEnding();
  return result;
}

/** The rules of the code this turn started on: each rule that changed while turns ran is behind a patch. */
function rulesOfThisTurn(): PolicyRules {
  const rules = {} as PolicyRules;
  for (const [rule, patchId] of Object.entries(rulePatches) as Array<[keyof PolicyRules, string]>) rules[rule] = patched(patchId);
  return rules;
}

async function runTurn(run: TurnRun): Promise<TurnResult> {
  const { input } = run;
  const withPlan = (result: TurnResult): TurnResult => ({ ...result, skill: run.state.skill, step: run.state.step, plan: run.carry() });
  try {
    const rules = rulesOfThisTurn();
    // Both catalogs are read once: the turn keeps the skills and tools it started with for its whole life.
    const [catalog, registry] = await Promise.all([skillCatalog(), rules.registeredTools ? toolCatalog() : Promise.resolve(emptyToolCatalog)]);
    const carry = migratePlanCarry(input.resume);
    run.pinned = pinnedSkillsOf(carry);
    const started = run.decide({
      type: 'turn.started',
      at: Date.now(),
      rules,
      settings: policySettingsOf(input.settings),
      catalog: catalog.skills.map((skill) => skill.name),
      carry,
      tools: registry,
    });
    const notes = started.kind === 'allow' && started.note ? [started.note] : [];
    if (input.skill) {
      const preloaded = await preloadSkill(run, catalog.skills, input.skill);
      if ('kind' in preloaded) return withPlan(run.finish(preloaded.ending));
      notes.push(preloaded.note);
    }
    for (const note of notes) appendUserText(run.messages, note);

    const tools: TurnTool[] = [...skillTools(catalog.skills), { spec: engineToolSpec(checkpointToolDefinition, 'hitl') }, ...registeredTools(registry.tools)];
    const system = buildSystemPrompt({ basePrompt, skills: catalog.skills });
    return withPlan(await runAgentLoop({ run, system, tools: new Map(tools.map((tool) => [tool.spec.name, tool])) }));
  } catch (err) {
    if (isCancellation(err)) {
      return await CancellationScope.nonCancellable(async () => withPlan(run.finish({ status: 'cancelled', reason: 'cancelled' })));
    }
    const reason = err instanceof ActivityFailure && err.activityType === 'callModel' ? 'model_error' : 'internal_error';
    return withPlan(run.finish({ status: 'failed', reason, error: describeFailure(err) }));
  }
}

async function tellSession(input: TurnInput, result: TurnResult): Promise<void> {
  try {
    await getExternalWorkflowHandle(sessionWorkflowId(input.sessionId)).signal(turnEndedSignal, result);
  } catch (err) {
    log.info('The turn has no running session to tell', { error: err instanceof Error ? err.message : String(err) });
  }
}

function describeFailure(err: unknown): TurnError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'ApplicationFailure', message: cause.message };
  if (err instanceof Error) return { code: err.name, message: err.message };
  return { code: 'unknown', message: String(err) };
}
