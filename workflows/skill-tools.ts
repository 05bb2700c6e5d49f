import { ApplicationFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ToolCall } from '../core/policy';
import {
  fetchSkill,
  loadSkillResult,
  loadSubskillResult,
  nonRetryableSkillErrors,
  pinSkill,
  runSkillTool,
  SkillToolName,
  type SkillManifest,
  type SkillSnapshot,
  type SkillToolPorts,
  type ToolResult,
} from '../core/skills';
import { preload, preloadedNote, type Preload } from '../core/run/start';
import { allowedNextOf, noteOf } from '../core/run/verdicts';
import type { TurnStart } from '../core/turn-start';
import type { SkillContentReference } from '../core/schemas/events';
import { engineToolSpecs } from '../core/tools';
import { publicError } from './internal-errors';
import type { ToolAnswer, TurnTool } from './tool-types';
import type { TurnRun } from './turn-run';

const skillActivities = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: nonRetryableSkillErrors },
});
/** The skill activities as the skill tools use them; an error that is not typed is logged here (the model gets the generic one). */
const logged =
  <I, O>(what: string, activity: (input: I) => Promise<O>) =>
  async (input: I): Promise<O> => {
    try {
      return await activity(input);
    } catch (err) {
      if (!isCancellation(err)) publicError(err, what);
      throw err;
    }
  };
const ports = {
  loadSkillSnapshot: logged('Loading a skill', skillActivities.loadSkillSnapshot),
  readSkillResource: logged('Reading a skill resource', skillActivities.readSkillResource),
};

/**
 * The skill ports with the given skill's load already done (readTurnStart): its snapshot, or its skill error thrown as
 * the loadSkillSnapshot activity's would be, so the model reads the same result. Any other load goes to the activity.
 */
function alreadyRead(name: string, read: NonNullable<TurnStart['given']>): SkillToolPorts {
  const loadSkillSnapshot = async (input: { name: string }): Promise<SkillSnapshot> => {
    if (input.name !== name) return ports.loadSkillSnapshot(input);
    if ('snapshot' in read) return read.snapshot;
    throw ApplicationFailure.create({ type: read.failure.type, message: read.failure.message, nonRetryable: true });
  };
  return { ...ports, loadSkillSnapshot };
}

const answer = (result: ToolResult): ToolAnswer => ({ content: result.content, isError: result.isError });

/**
 * The skill tools of a turn: they serve the turn's pinned skills (fetching a skill's snapshot the first time) and tell
 * the policy what was loaded. Whether a call may run at all the policy has decided before.
 */
export function skillTools(catalog: SkillManifest[]): TurnTool[] {
  const specs = new Map(engineToolSpecs(catalog).map((spec) => [spec.name, spec]));
  const tool = (name: string, run: NonNullable<TurnTool['run']>): TurnTool => ({ spec: specs.get(name)!, run });
  const plain = (call: ToolCall, run: TurnRun) => runPlainSkillTool(catalog, call, run);
  return [
    {
      ...tool(SkillToolName.loadSkill, (call, run) => loadSkill(catalog, call, run)),
      skillCall: (call, run) => ({ name: call.name, depth: run.depth + 1, input: call.input }),
    },
    tool(SkillToolName.loadSubskill, loadSubskill),
    tool(SkillToolName.readFile, plain),
    tool(SkillToolName.listSkills, plain),
  ];
}

async function loadSkill(
  catalog: SkillManifest[],
  call: ToolCall,
  run: TurnRun,
  skillPorts: SkillToolPorts = ports,
): Promise<ToolAnswer> {
  const fetched = await fetchSkill(call.input, { skills: catalog, state: run.pinned, ports: skillPorts });
  if ('result' in fetched) return answer(fetched.result);
  const { snapshot } = fetched;
  run.pinned = pinSkill(run.pinned, snapshot);
  const verdict = run.decide({
    type: 'tool.finished',
    at: Date.now(),
    call,
    outcome: { kind: 'skill.loaded', manifest: snapshot.manifest },
  });
  const loaded = answer(loadSkillResult(snapshot, allowedNextOf(verdict)));
  return { ...loaded, result: contentReference(snapshot.name, run, loaded.content) };
}

/** What the tool.end event shows instead of a skill text the model got: the skill, its pinned version, the size. */
function contentReference(skill: string, run: TurnRun, content: string, subskill?: string): SkillContentReference {
  return {
    skill,
    ...(subskill ? { subskill } : {}),
    hash: run.pinned.loaded[skill]?.hash ?? '',
    chars: content.length,
  };
}

async function loadSubskill(call: ToolCall, run: TurnRun): Promise<ToolAnswer> {
  const result = loadSubskillResult(call.input, run.pinned);
  if (result.isError) return answer(result);
  const { skill, subskill } = call.input as { skill: string; subskill: string };
  const verdict = run.decide({
    type: 'tool.finished',
    at: Date.now(),
    call,
    outcome: { kind: 'subskill.loaded', skill, subskill },
  });
  const note = noteOf(verdict);
  const content = note ? `${result.content}\n\n${note}` : result.content;
  return { content, isError: false, result: contentReference(skill, run, content, subskill) };
}

async function runPlainSkillTool(catalog: SkillManifest[], call: ToolCall, run: TurnRun): Promise<ToolAnswer> {
  const { result, state } = await runSkillTool(call, { skills: catalog, state: run.pinned, ports });
  run.pinned = state;
  return answer(result);
}

/**
 * Loads the skill a turn was started with (the API's `skill`) as if the model had called load_skill, and says so in a
 * note for the model, with the parameters the caller gave; or ends the turn, as the run machine decides
 * (core/run/start.ts: parameters that are not the skill's, or the policy ending the turn on that call).
 */
export async function preloadSkill(
  run: TurnRun,
  catalog: SkillManifest[],
  name: string,
  params?: Record<string, unknown>,
  read?: TurnStart['given'],
): Promise<Exclude<Preload, { kind: 'load' }>> {
  const manifest = catalog.find((skill) => skill.name === name);
  const decided = preload(run.machine, manifest, name, params, Date.now());
  run.take({ state: decided.state, commands: [] });
  const next = decided.preload;
  if (next.kind !== 'load') return next;
  const loaded = await loadSkill(catalog, next.call, run, read ? alreadyRead(name, read) : ports);
  return { kind: 'note', text: preloadedNote(name, loaded, params) };
}
