import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { searchAttributeNameOf, type SearchAttributeRole } from './core/search-attributes';

export { searchAttributeNames } from './core/search-attributes';

const keyword = (role: SearchAttributeRole) =>
  defineSearchAttributeKey(searchAttributeNameOf[role], SearchAttributeType.KEYWORD);

/** The search attributes of core/search-attributes.ts as typed keys, for upserts and typed queries. */
export const searchAttributes = {
  session: keyword('session'),
  user: keyword('user'),
  status: keyword('status'),
  skill: keyword('skill'),
  step: keyword('step'),
  checkpoint: keyword('checkpoint'),
  /** Skill runs only: how deep (`1` for a skill the turn invoked), and the turn they run under. */
  depth: keyword('depth'),
  turn: keyword('turn'),
} as const;
