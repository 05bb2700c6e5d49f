import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Every custom search attribute skillflow sets: one list, registered by the start script and by compose. */
export const searchAttributes = {
  session: defineSearchAttributeKey('SkillflowSession', SearchAttributeType.KEYWORD),
  user: defineSearchAttributeKey('SkillflowUser', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('SkillflowStatus', SearchAttributeType.KEYWORD),
  skill: defineSearchAttributeKey('SkillflowSkill', SearchAttributeType.KEYWORD),
  step: defineSearchAttributeKey('SkillflowStep', SearchAttributeType.KEYWORD),
  checkpoint: defineSearchAttributeKey('SkillflowCheckpoint', SearchAttributeType.KEYWORD),
} as const;

export const searchAttributeNames = Object.values(searchAttributes).map((key) => key.name);
