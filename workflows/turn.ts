import {
  ApplicationFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { utcDayOf } from '../core/budget';
import type { SkillCatalog } from '../core/skills';
import type { TurnStart } from '../core/turn-start';
import {
  pinnedSkillsOf,
  policySettingsOf,
  readPlanCarry,
  unresolvedSkills,
  withSnapshots,
  type PlanCarry,
} from '../core/policy';
import { basePrompt } from '../core/prompts';
import { cancelledEnding } from '../core/run/endings';
import { noteOf } from '../core/run/verdicts';
import { buildSystemPrompt } from '../core/skills';
import { sessionWorkflowId, turnFailedErrorType, type TurnInput, type TurnResult } from '../core/turn';
import { appendUserText, runAgentLoop } from './agent-loop';
import { answerAhead, takeAnswer, takeSignalled, takeAnswerAhead, updateRejection } from './checkpoint-desk';
import {
  answerCheckpointUpdate,
  checkpointDecisionSignal,
  skillProgressSignal,
  turnEndedSignal,
  turnEventsQuery,
  turnStateQuery,
} from './definitions';
import { failedEnding } from './failed-ending';
import { toolsOfRun } from './run-tools';
import { absorbProgress } from './skill-progress';
import { preloadSkill } from './skill-tools';
import { TurnRun } from './turn-run';

const { readTurnStart } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
});

/**
 * One chat turn: the agent loop over a fresh message list (the session's earlier text and the new message), with
 * the skill tools, the checkpoint tool and the worker's registered tools, ruled by the turn's policy (core/policy).
 * The turn returns what the session keeps; a turn that ends `failed` fails its workflow with that result in the
 * failure's details (Failed in the Temporal UI), after the session learned it.
 */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const run = new TurnRun(input);
  setHandler(turnStateQuery, () => run.state);
  setHandler(turnEventsQuery, (afterOffset: number, limit?: number) => run.log.after(afterOffset, limit));
  // A human's decision on the pending checkpoint: kept for askHuman, which is waiting for it, or passed down to the
  // skill run that asked. The update answers the API with the reason for a rejection; an invalid signal (operators, by
  // hand) is logged and ignored. An answer to the checkpoint the turn opens next waits for it (answers-ahead.ts).
  setHandler(
    answerCheckpointUpdate,
    (decision) => {
      const accepted = { checkpointId: decision.checkpointId, action: decision.action };
      const ahead = answerAhead(run, decision);
      if (ahead) return takeAnswerAhead(run, decision, ahead).then(() => accepted);
      const passedDown = takeAnswer(run, decision);
      return passedDown ? passedDown.then(() => accepted) : accepted;
    },
    {
      validator: (decision) => {
        const rejection = updateRejection(run, decision);
        if (rejection) throw rejection;
      },
    },
  );
  setHandler(checkpointDecisionSignal, (decision) => takeSignalled(run, decision));
  // What a skill run this turn invoked did: its events, its pending checkpoint, its usage and records.
  setHandler(skillProgressSignal, (progress) => absorbProgress(run, progress));

  const result = await runTurn(run);
  await CancellationScope.nonCancellable(() => tellSession(input, result));
  run.publishEnding();
  if (result.status === 'failed') throw turnFailure(result);
  return result;
}

/** The failure a failed turn ends its workflow with: not retried, its message the turn's error, its result the detail. */
function turnFailure(result: TurnResult): ApplicationFailure {
  return ApplicationFailure.create({
    type: turnFailedErrorType,
    message: result.error?.message ?? `The turn failed (${result.reason ?? 'failed'}).`,
    nonRetryable: true,
    details: [result],
  });
}

async function runTurn(run: TurnRun): Promise<TurnResult> {
  const { input } = run;
  const withPlan = (result: TurnResult): TurnResult => ({
    ...result,
    skill: run.state.skill,
    step: run.state.step,
    plan: run.carry(),
  });
  try {
    run.batchAttributes();
    if (input.tokenBudget !== undefined)
      run.ledgerScope = { user: input.userId, day: utcDayOf(input.createdAt), turn: input.turnId };
    // Both catalogs are read once: the turn keeps the skills and tools it started with for its whole life.
    const { catalog, registry, carry, given } = await readStart(input);
    run.pinned = pinnedSkillsOf(carry);
    const started = run.decide({
      type: 'turn.started',
      at: Date.now(),
      settings: policySettingsOf(input.settings),
      catalog: catalog.skills.map((skill) => skill.name),
      carry,
      tools: registry,
      ...(input.skill && input.params ? { given: { skill: input.skill, params: input.params } } : {}),
      ...(input.tokenBudget !== undefined ? { tokenBudget: input.tokenBudget } : {}),
    });
    const note = noteOf(started);
    const notes = note === null ? [] : [note];
    if (input.skill) {
      const preloaded = await preloadSkill(run, catalog.skills, input.skill, input.params, given);
      if (preloaded.kind === 'end') return withPlan(run.finish(preloaded.ending));
      notes.push(preloaded.text);
    }
    for (const note of notes) appendUserText(run.messages, note);

    const system = buildSystemPrompt({ basePrompt, skills: catalog.skills });
    return withPlan(
      await runAgentLoop({ run, system, tools: toolsOfRun(run, catalog.skills, catalog.skills, registry) }),
    );
  } catch (err) {
    if (isCancellation(err)) {
      return await CancellationScope.nonCancellable(async () => withPlan(run.finish(cancelledEnding())));
    }
    return withPlan(run.finish(failedEnding(err)));
  }
}

/** What a turn starts with: its catalogs, its carried plan with the pinned skills read back, and its given skill's load. */
interface StartReading {
  catalog: SkillCatalog;
  registry: TurnStart['tools'];
  carry: PlanCarry | undefined;
  given?: TurnStart['given'];
}

/**
 * The start in one activity (readTurnStart): one workflow task for the catalogs (the tool catalog by reference), the
 * carried skills and the given skill.
 */
async function readStart(input: TurnInput): Promise<StartReading> {
  const resume = readPlanCarry(input.resume);
  const carried = unresolvedSkills(resume);
  const alreadyPinned = resume?.snapshots.some((snapshot) => snapshot.name === input.skill);
  const start = await readTurnStart({
    tools: true,
    toolsByReference: true,
    carried,
    ...(input.skill && !alreadyPinned ? { given: input.skill } : {}),
  });
  for (const ref of start.carried.unavailable)
    log.warn('A carried skill version is no longer available; the plan goes on without it', {
      skill: ref.name,
      hash: ref.hash,
    });
  const carry = resume && carried.length > 0 ? withSnapshots(resume, start.carried.snapshots) : resume;
  return { catalog: start.catalog, registry: start.tools, carry, given: start.given };
}

async function tellSession(input: TurnInput, result: TurnResult): Promise<void> {
  try {
    await getExternalWorkflowHandle(sessionWorkflowId(input.sessionId)).signal(turnEndedSignal, result);
  } catch (err) {
    log.info('The turn has no running session to tell', { error: err instanceof Error ? err.message : String(err) });
  }
}
