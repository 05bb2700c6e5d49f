/** Names of the model-facing skill tools: part of the public contract. */
export const SkillToolName = {
  loadSkill: 'load_skill',
  loadSubskill: 'load_subskill',
  readFile: 'read_file',
  listSkills: 'list_skills',
} as const;

export const skillToolNames: readonly string[] = Object.values(SkillToolName);

/** The human-in-the-loop tool that skills name in their instructions (defined by the orchestrator). */
export const humanApprovalToolName = 'request_human_approval';

/** Tools the engine offers in every turn, whatever a skill's tool list says. */
export const engineToolNames: readonly string[] = [...skillToolNames, humanApprovalToolName];
