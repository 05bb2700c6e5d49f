import { checkpointToolDefinition } from './core/checkpoints';
import { engineToolsInScope } from './core/policy';
import type { SkillManifest } from './core/skills';
import { engineToolSpec, isCatalogReference, type ToolCatalog, type ToolCatalogReference } from './core/tools';
import { invokeSkillTool } from './invoke-skill';
import { submitOutputTool } from './output-tool';
import { registeredTools } from './registered-tools';
import { skillTools } from './skill-tools';
import type { TurnTool } from './tool-types';
import type { TurnRun } from './turn-run';

/**
 * The tools of a run, once its policy has started: the engine's tools it has (all of them in a turn; in a skill run, its
 * own: no load_skill, list_skills or submit_output, and invoke_skill only while it may nest) and every registered tool
 * of its catalog (each round offers those the active skill grants). `invocable` are the skills invoke_skill names.
 */
export function toolsOfRun(
  run: TurnRun,
  catalog: SkillManifest[],
  invocable: SkillManifest[],
  registry: ToolCatalog | ToolCatalogReference,
): Map<string, TurnTool> {
  const engine: TurnTool[] = [
    ...skillTools(catalog),
    invokeSkillTool(catalog, invocable),
    submitOutputTool,
    { spec: engineToolSpec(checkpointToolDefinition, 'hitl') },
  ];
  const own = engineToolsInScope(run.policy);
  const tools = [
    ...engine.filter((tool) => own.includes(tool.spec.name)),
    ...registeredTools(isCatalogReference(registry) ? registry.headers : registry.tools),
  ];
  return new Map(tools.map((tool) => [tool.spec.name, tool]));
}
