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
} as const;

export type SearchAttributeRole = keyof typeof searchAttributeNameOf;

export const searchAttributeNames: string[] = Object.values(searchAttributeNameOf);
