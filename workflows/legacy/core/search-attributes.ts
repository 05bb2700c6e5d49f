/**
 * Every custom search attribute skillflow sets, by role: one list, registered by the dev server, compose and the
 * topology suite, and typed for workflow code in workflows/search-attributes.ts. All are Keyword attributes.
 */
export const searchAttributeNameOf = {
  session: 'SkillflowSession',
  user: 'SkillflowUser',
  status: 'SkillflowStatus',
  skill: 'SkillflowSkill',
  step: 'SkillflowStep',
  checkpoint: 'SkillflowCheckpoint',
  /** Skill runs only: how deep the run nests (`1` for a skill the turn invoked), and the turn it runs under. */
  depth: 'SkillflowDepth',
  turn: 'SkillflowTurn',
} as const;

export type SearchAttributeRole = keyof typeof searchAttributeNameOf;

export const searchAttributeNames: string[] = Object.values(searchAttributeNameOf);
