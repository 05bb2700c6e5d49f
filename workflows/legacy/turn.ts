import {
  ApplicationFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { utcDayOf } from './core/budget';
import type { SkillCatalog } from './core/skills';
import { emptyToolCatalog, type ToolCatalog, type ToolCatalogReference } from './core/tools';
import type { TurnStart } from './core/turn-start';
import {
  migratePlanCarry,
  pinnedSkillsOf,
  policySettingsOf,
  unresolvedSkills,
  separatePatches,
  withSnapshots,
  workflowPatches,
  type PlanCarry,
} from './core/policy';
import { basePrompt } from './core/prompts';
import { cancelledEnding } from './core/run/endings';
import { buildSystemPrompt } from './core/skills';
import { sessionWorkflowId, turnFailedErrorType, type TurnInput, type TurnResult } from './core/turn';
import { appendUserText, runAgentLoop } from './agent-loop';
import { answerAhead, decisionRejection, takeAnswerAhead, takeDecision, updateRejection } from './checkpoint-desk';
import {
  answerCheckpointUpdate,
  checkpointDecisionSignal,
  skillProgressSignal,
  turnEndedSignal,
  turnEventsQuery,
  turnStateQuery,
} from './definitions';
import { engineOfThisRun, failedEnding, patchesOfThisRun, rulesOfThisRun, type HasPatch } from './run-rules';
import { toolsOfRun } from './run-tools';
import { absorbProgress } from './skill-progress';
import { preloadSkill } from './skill-tools';
import { TurnRun } from './turn-run';

const { skillCatalog, toolCatalog, resolveSkillSnapshots, readTurnStart } = proxyActivities<Activities>({
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
  const has = patchesOfThisRun();
  setHandler(turnStateQuery, () => run.state);
  setHandler(turnEventsQuery, (afterOffset: number, limit?: number) => run.log.after(afterOffset, limit));
  // A human's decision on the pending checkpoint: kept for askHuman, which is waiting for it, or passed down to the
  // skill run that asked. The update answers the API with the reason for a rejection; an invalid signal (operators, by
  // hand) is logged and ignored. An answer to the checkpoint the turn opens next waits for it (answers-ahead.ts); no
  // patch: histories of earlier code hold no accepted update of that kind (their validator refused it), so they replay
  // as they ran.
  setHandler(
    answerCheckpointUpdate,
    (decision) => {
      const accepted = { checkpointId: decision.checkpointId, action: decision.action };
      const ahead = answerAhead(run, decision);
      if (ahead) return takeAnswerAhead(run, decision, ahead).then(() => accepted);
      const passedDown = takeDecision(run, decision);
      return passedDown ? passedDown.then(() => accepted) : accepted;
    },
    {
      validator: (decision) => {
        const rejection = updateRejection(run, decision);
        if (rejection) throw rejection;
      },
    },
  );
  setHandler(checkpointDecisionSignal, (decision) => {
    const rejection = decisionRejection(run, decision);
    if (rejection) log.warn('Ignored an invalid checkpoint decision signal', { problem: rejection.message, decision });
    else return takeDecision(run, decision);
  });
  // What a skill run this turn invoked did: its events, its pending checkpoint, its usage and records.
  setHandler(skillProgressSignal, (progress) => absorbProgress(run, progress));

  const result = await runTurn(run, has);
  await CancellationScope.nonCancellable(() => tellSession(input, result));
  run.publishEnding();
  if (result.status === 'failed' && has(workflowPatches.failedTurnFails)) throw turnFailure(result);
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

async function runTurn(run: TurnRun, has: HasPatch): Promise<TurnResult> {
  const { input } = run;
  const withPlan = (result: TurnResult): TurnResult => ({
    ...result,
    skill: run.state.skill,
    step: run.state.step,
    plan: run.carry(),
  });
  try {
    const rules = rulesOfThisRun(has);
    run.useEngine(engineOfThisRun(has));
    if (rules.spendingBounds && input.tokenBudget !== undefined)
      run.ledgerScope = { user: input.userId, day: utcDayOf(input.createdAt), turn: input.turnId };
    // Both catalogs are read once: the turn keeps the skills and tools it started with for its whole life.
    const { catalog, registry, carry, given } = patched(separatePatches.turnStartInOneActivity)
      ? await readStartAtOnce(input, rules.registeredTools)
      : await readStartApart(input, rules.registeredTools, has);
    run.pinned = pinnedSkillsOf(carry);
    const started = run.decide({
      type: 'turn.started',
      at: Date.now(),
      rules,
      settings: policySettingsOf(input.settings),
      catalog: catalog.skills.map((skill) => skill.name),
      carry,
      tools: registry,
      ...(input.skill && input.params ? { given: { skill: input.skill, params: input.params } } : {}),
      ...(input.tokenBudget !== undefined ? { tokenBudget: input.tokenBudget } : {}),
    });
    const notes = started.kind === 'allow' && started.note ? [started.note] : [];
    if (input.skill) {
      const preloaded = await preloadSkill(run, catalog.skills, input.skill, input.params, given);
      if ('kind' in preloaded) return withPlan(run.finish(preloaded.ending));
      notes.push(preloaded.note);
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
  registry: ToolCatalog | ToolCatalogReference;
  carry: PlanCarry | undefined;
  given?: TurnStart['given'];
}

/** The start in one activity (readTurnStart): one workflow task for the catalogs, the carried skills and the given skill. */
async function readStartAtOnce(input: TurnInput, registeredTools: boolean): Promise<StartReading> {
  const resume = migratePlanCarry(input.resume);
  const carried = unresolvedSkills(resume);
  const alreadyPinned = resume?.snapshots.some((snapshot) => snapshot.name === input.skill);
  const toolsByReference = registeredTools && patched(separatePatches.toolCatalogByReference);
  const start = await readTurnStart({
    tools: registeredTools,
    ...(toolsByReference ? { toolsByReference } : {}),
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

/** The start of turns of earlier code: the catalogs at once, then the carried skills; the given skill is loaded later. */
async function readStartApart(input: TurnInput, registeredTools: boolean, has: HasPatch): Promise<StartReading> {
  const [catalog, registry] = await Promise.all([
    skillCatalog(),
    registeredTools ? toolCatalog() : Promise.resolve(emptyToolCatalog),
  ]);
  return { catalog, registry, carry: await withCarriedSkills(migratePlanCarry(input.resume), has) };
}

/**
 * The carried plan with the pinned skills it names read back. A version no longer available leaves the plan without
 * its skill active: the model is told to load the skill again, which pins the current version.
 */
async function withCarriedSkills(carry: PlanCarry | undefined, has: HasPatch): Promise<PlanCarry | undefined> {
  const wanted = unresolvedSkills(carry);
  if (!carry || wanted.length === 0 || !has(workflowPatches.skillReferences)) return carry;
  const { snapshots, unavailable } = await resolveSkillSnapshots({ skills: wanted });
  for (const ref of unavailable)
    log.warn('A carried skill version is no longer available; the plan goes on without it', {
      skill: ref.name,
      hash: ref.hash,
    });
  return withSnapshots(carry, snapshots);
}

async function tellSession(input: TurnInput, result: TurnResult): Promise<void> {
  try {
    await getExternalWorkflowHandle(sessionWorkflowId(input.sessionId)).signal(turnEndedSignal, result);
  } catch (err) {
    log.info('The turn has no running session to tell', { error: err instanceof Error ? err.message : String(err) });
  }
}
