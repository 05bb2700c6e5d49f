import {
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { mayInvoke, policySettingsOf } from './core/policy';
import { basePrompt } from './core/prompts';
import type { SkillRunInput, SkillRunResult } from './core/skill-runs';
import { cancelledEnding, type Ending } from './core/run/endings';
import { settleSkillEnding, skillRunResultOf } from './core/run/skill-result';
import { nonRetryableSkillErrors, outputSchema, pinSkill, skillRunMessages, skillRunSystemPrompt } from './core/skills';
import type { TurnInput } from './core/turn';
import { runAgentLoop } from './agent-loop';
import { decisionRejection, takeDecision } from './checkpoint-desk';
import {
  answerCheckpointUpdate,
  checkpointDecisionSignal,
  skillProgressSignal,
  turnEventsQuery,
  turnStateQuery,
} from './definitions';
import { engineOfThisRun, failedEnding, patchesOfThisRun, rulesOfThisRun } from './run-rules';
import { absorbProgress, ProgressRelay } from './skill-progress';
import { toolsOfRun } from './run-tools';
import { TurnRun } from './turn-run';

const { skillCatalog, loadSkillSnapshot } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: nonRetryableSkillErrors },
});

/**
 * A skill run: one skill, invoked with invoke_skill, as a child workflow of the turn (or of the skill run that invoked
 * it). It runs the same agent loop as a turn over a fresh conversation (seed 003): the base prompt, the skill's
 * instructions with the skills it may invoke, the history it was handed, the task. Its policy is the skill's: its
 * plan, checkpoints, limits and children. What it emits and the checkpoint it waits at reach the turn as they happen
 * (skill-progress.ts); answers come down through the turn. It returns its output, validated against the skill's
 * declared output.
 */
export async function skillWorkflow(input: SkillRunInput): Promise<SkillRunResult> {
  const run = new SkillRun(input);
  setHandler(turnStateQuery, () => run.state);
  setHandler(turnEventsQuery, (afterOffset: number, limit?: number) => run.log.after(afterOffset, limit));
  // Answers come from the turn, which checked them against the checkpoint it mirrors; operators may send them here too.
  setHandler(
    answerCheckpointUpdate,
    (decision) => {
      const accepted = { checkpointId: decision.checkpointId, action: decision.action };
      const passedDown = takeDecision(run, decision);
      return passedDown ? passedDown.then(() => accepted) : accepted;
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
    else return takeDecision(run, decision);
  });
  setHandler(skillProgressSignal, (progress) => absorbProgress(run, progress));

  const relay = new ProgressRelay(run, input.parentWorkflowId);
  await runSkill(run, input);
  return await CancellationScope.nonCancellable(async () => {
    const result = resultOf(run, input);
    run.publishEnding();
    await relay.close();
    upsertMemo(recordMemo(result));
    return result;
  });
}

const maxMemoOutputChars = 32 * 1024;

/** The run's outcome in its memo, beside the task and params it started with: what a visibility listing shows. */
function recordMemo(result: SkillRunResult): Record<string, unknown> {
  const output = JSON.stringify(result.output ?? null);
  return {
    status: result.status,
    success: result.success,
    output: output.length <= maxMemoOutputChars ? result.output : { truncated: true, chars: output.length },
    error: result.error ?? null,
    durationMs: Date.now() - workflowInfo().startTime.getTime(),
  };
}

/** Runs the skill to its ending (`run.ending`). */
async function runSkill(run: TurnRun, input: SkillRunInput): Promise<void> {
  try {
    const has = patchesOfThisRun();
    const rules = rulesOfThisRun(has);
    run.useEngine(engineOfThisRun(has));
    const { allowance } = input;
    if (rules.spendingBounds && allowance?.tokens)
      run.ledgerScope = { user: input.userId, day: allowance.tokens.day, turn: input.rootTurnId };
    // The skill catalog is read when the run starts (like a turn's); the registered tools are its turn's, as given.
    const [skills, snapshot] = await Promise.all([skillCatalog(), loadSkillSnapshot({ name: input.skill })]);
    const catalog = skills.skills;
    const registry = input.tools;
    run.pinned = pinSkill(run.pinned, snapshot);
    const { manifest } = snapshot;
    run.decide({
      type: 'turn.started',
      at: Date.now(),
      rules,
      settings: policySettingsOf(input.settings),
      catalog: catalog.map((skill) => skill.name),
      tools: registry,
      invocation: {
        manifest,
        depth: input.depth,
        checkpointBase: input.checkpointBase,
        params: input.params,
        ...(allowance ? { invocationsLeft: allowance.invocations } : {}),
      },
      ...(allowance?.tokens ? { tokenBudget: allowance.tokens.left } : {}),
    });
    const children = mayInvoke(run.policy) ? catalog.filter((skill) => manifest.children.includes(skill.name)) : [];
    const system = skillRunSystemPrompt({
      basePrompt,
      snapshot,
      params: input.params,
      depth: input.depth,
      children,
      depthCapped: manifest.children.length > 0 && children.length === 0,
    });
    await runAgentLoop({ run, system, tools: toolsOfRun(run, catalog, children, registry) });
  } catch (err) {
    if (isCancellation(err)) await CancellationScope.nonCancellable(async () => run.finish(cancelledEnding()));
    else run.finish(failedEnding(err));
  }
}

/**
 * A skill run's live state: a run whose ending, once decided, carries its declared output, or fails without a valid one
 * (core/run/skill-result.ts).
 */
class SkillRun extends TurnRun {
  constructor(readonly skillRun: SkillRunInput) {
    super(turnInputOf(skillRun), skillRunMessages(skillRun.history, skillRun.task), {
      depth: skillRun.depth,
      rootTurnId: skillRun.rootTurnId,
    });
  }

  protected override settle(ending: Ending): Ending {
    const manifest = this.pinned.loaded[this.skillRun.skill]?.manifest;
    const settled = settleSkillEnding({
      skill: this.skillRun.skill,
      ending,
      outputSchema: manifest && manifest.output.length > 0 ? outputSchema(manifest) : null,
      accepted: this.structuredOutput,
    });
    this.structuredOutput = settled.output;
    return settled.ending;
  }
}

/** What the skill run returns of its ending, its declared output recorded as an artifact. */
function resultOf(run: TurnRun, input: SkillRunInput): SkillRunResult {
  const { ending, structuredOutput } = run;
  const output = ending.status === 'completed' ? structuredOutput : undefined;
  if (output) run.emitArtifact(input.skill, output.value, input.callId);
  return {
    skill: input.skill,
    usage: run.state.usage,
    checkpointCount: run.policy.checkpointCount,
    skills: run.state.skills ?? [],
    ...skillRunResultOf(input.skill, { ending, output }),
  };
}

/** The run's identity in the shape a turn's has: its own workflow id, the turn's session and user. */
function turnInputOf(input: SkillRunInput): TurnInput {
  return {
    turnId: input.workflowId,
    sessionId: input.sessionId,
    userId: input.userId,
    message: input.task,
    history: [],
    createdAt: input.createdAt,
    settings: input.settings,
    ...(input.requestId ? { requestId: input.requestId } : {}),
  };
}
