import type { PlanSymbol } from './plan-ast';
import { SkillToolName } from './tool-names';
import {
  describeError,
  listSkillsResult,
  loadSkillResult,
  loadSubskillResult,
  pinSkill,
  prepareLoadSkill,
  prepareReadFile,
  readFileResult,
  toolError,
  type SkillTurnState,
  type ToolResult,
} from './tool-results';
import type { ReadSkillResourceInput, SkillManifest, SkillResource, SkillSnapshot } from './types';

/** The I/O the skill tools need: the skill activities in a workflow, the registry directly elsewhere. */
export interface SkillToolPorts {
  loadSkillSnapshot(input: { name: string }): Promise<SkillSnapshot>;
  readSkillResource(input: ReadSkillResourceInput): Promise<SkillResource>;
}

export interface SkillToolContext {
  /** The skills the turn may load (its catalog). */
  skills: SkillManifest[];
  state: SkillTurnState;
  ports: SkillToolPorts;
  /** What the plan allows next for a just-loaded skill, when the orchestrator tracks it; defaults to the plan's start. */
  allowedNext?: (snapshot: SkillSnapshot) => PlanSymbol[];
}

export interface SkillToolOutcome {
  result: ToolResult;
  state: SkillTurnState;
}

/** load_skill's I/O: the pinned snapshot, or the one the port fetches; a result instead when the input is wrong. */
export async function fetchSkill(
  input: unknown,
  context: Pick<SkillToolContext, 'skills' | 'state' | 'ports'>,
): Promise<{ snapshot: SkillSnapshot } | { result: ToolResult }> {
  try {
    const step = prepareLoadSkill(input, context.skills, context.state);
    if (step.kind === 'fetch') return { snapshot: await context.ports.loadSkillSnapshot({ name: step.name }) };
    return step.snapshot ? { snapshot: step.snapshot } : { result: step.result };
  } catch (error) {
    return { result: toolError(`${SkillToolName.loadSkill} failed: ${describeError(error)}`) };
  }
}

/** Runs one skill tool call. Never throws: every failure becomes an error result the model sees. */
export async function runSkillTool(
  call: { name: string; input: unknown },
  context: SkillToolContext,
): Promise<SkillToolOutcome> {
  const { state } = context;
  try {
    switch (call.name) {
      case SkillToolName.loadSkill: {
        const fetched = await fetchSkill(call.input, context);
        if ('result' in fetched) return { result: fetched.result, state };
        return {
          result: loadSkillResult(fetched.snapshot, context.allowedNext?.(fetched.snapshot)),
          state: pinSkill(state, fetched.snapshot),
        };
      }
      case SkillToolName.loadSubskill:
        return { result: loadSubskillResult(call.input, state), state };
      case SkillToolName.readFile: {
        const step = prepareReadFile(call.input, state);
        if (step.kind === 'done') return { result: step.result, state };
        return { result: readFileResult(await context.ports.readSkillResource(step.request)), state };
      }
      case SkillToolName.listSkills:
        return { result: listSkillsResult(call.input, context.skills), state };
      default:
        return { result: toolError(`${call.name} is not a skill tool.`), state };
    }
  } catch (error) {
    return { result: toolError(`${call.name} failed: ${describeError(error)}`), state };
  }
}
