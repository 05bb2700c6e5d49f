import { ActivityFailure, ApplicationFailure, CancellationScope, getExternalWorkflowHandle, isCancellation, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { basePrompt } from '../core/prompts';
import { buildSystemPrompt } from '../core/skills';
import { sessionWorkflowId, type TurnError, type TurnInput, type TurnResult } from '../core/turn';
import { turnEndedSignal } from './definitions';
import { appendUserText, runAgentLoop } from './agent-loop';
import { CheckpointDesk } from './checkpoint-desk';
import { SkillRuntime } from './skill-runtime';
import type { TurnTool } from './tool-types';
import { TurnRun } from './turn-run';

const { skillCatalog } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

/**
 * One chat turn: the agent loop over a fresh message list (the session's earlier text and the new message), with
 * the skill tools, the checkpoint tool and the step orchestrator. The turn returns what the session keeps.
 */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const run = new TurnRun(input);
  const result = await runTurn(run);
  await CancellationScope.nonCancellable(() => tellSession(input, result));
  run.publishEnding();
  return result;
}

async function tellSession(input: TurnInput, result: TurnResult): Promise<void> {
  try {
    await getExternalWorkflowHandle(sessionWorkflowId(input.sessionId)).signal(turnEndedSignal, result);
  } catch (err) {
    log.info('The turn has no running session to tell', { error: err instanceof Error ? err.message : String(err) });
  }
}

async function runTurn(run: TurnRun): Promise<TurnResult> {
  const { input } = run;
  let skills: SkillRuntime | undefined;
  const withPlan = (result: TurnResult): TurnResult => ({ ...result, skill: run.state.skill, step: run.state.step, plan: skills?.carry() });
  try {
    const catalog = await skillCatalog();
    skills = new SkillRuntime(run, catalog.skills);
    const notes: string[] = [];
    if (input.resume) notes.push(skills.resume(input.resume) ?? '');
    if (input.skill) notes.push(await skills.preload(input.skill));
    for (const note of notes.filter(Boolean)) appendUserText(run.messages, note);

    const desk = new CheckpointDesk(run, skills.checkpointRules({ ttlMs: input.settings.checkpointTtlMs, onTimeout: input.settings.checkpointOnTimeout }));
    const tools = new Map<string, TurnTool>([...skills.tools(), desk.tool()].map((tool) => [tool.definition.name, tool]));
    const system = buildSystemPrompt({ basePrompt, skills: catalog.skills });
    return withPlan(await runAgentLoop({ run, system, tools, guard: skills.guard() }));
  } catch (err) {
    if (isCancellation(err)) {
      return await CancellationScope.nonCancellable(async () => withPlan(run.finish({ status: 'cancelled', reason: 'cancelled' })));
    }
    const reason = err instanceof ActivityFailure && err.activityType === 'callModel' ? 'model_error' : 'internal_error';
    return withPlan(run.finish({ status: 'failed', reason, error: describeFailure(err) }));
  }
}

function describeFailure(err: unknown): TurnError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'ApplicationFailure', message: cause.message };
  if (err instanceof Error) return { code: err.name, message: err.message };
  return { code: 'unknown', message: String(err) };
}

