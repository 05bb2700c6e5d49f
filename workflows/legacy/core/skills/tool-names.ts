/** Names of the model-facing skill tools: part of the public contract. */
export const SkillToolName = {
  loadSkill: 'load_skill',
  loadSubskill: 'load_subskill',
  readFile: 'read_file',
  listSkills: 'list_skills',
  /** Runs a skill on a task of its own, as a child workflow, and returns its result (docs/skills.md). */
  invokeSkill: 'invoke_skill',
  /** Hands in the active skill's declared output in a turn (a skill run's final answer is its output). */
  submitOutput: 'submit_output',
} as const;

export const skillToolNames: readonly string[] = Object.values(SkillToolName);

/** The human-in-the-loop tool that skills name in their instructions (defined by the orchestrator). */
export const humanApprovalToolName = 'request_human_approval';

/** Tools the engine offers in every turn, whatever a skill's tool list says. */
export const engineToolNames: readonly string[] = [...skillToolNames, humanApprovalToolName];

/** The engine's tools in a skill run: its own subskills, resources and checkpoints, and its children while it may nest. */
export const skillRunToolNames = (mayInvoke: boolean): readonly string[] => [
  SkillToolName.loadSubskill,
  SkillToolName.readFile,
  ...(mayInvoke ? [SkillToolName.invokeSkill] : []),
  humanApprovalToolName,
];
