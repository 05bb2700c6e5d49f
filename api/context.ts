import type { Client } from '@temporalio/client';
import type { SkillCatalog } from '../core/skills/types';
import type { Config } from '../lib/config';
import type { LiveChannel } from '../lib/live';
import type { PageCursors } from './cursors';
import type { AnswerLinks } from './links/answer-links';
import type { LinkStreams } from './links/link-streams';
import type { RateLimits } from './limits';
import type { Quotas } from './quotas';
import type { StreamTokens } from './stream-tokens';
import type { OpenStreams } from './streams/open-streams';
import type { TurnFeeds } from './streams/turn-feeds';

/** Where the API reads the skill catalog from (the same registry code the worker uses). */
export interface SkillCatalogSource {
  catalog(): Promise<SkillCatalog>;
}

/** What every route needs: one Temporal client per process, the validated configuration, and the stream plumbing. */
export interface ApiContext {
  client: Client;
  config: Config;
  live: LiveChannel;
  /** One feed per followed turn, shared by all its streams in this process. */
  feeds: TurnFeeds;
  tokens: StreamTokens;
  links: AnswerLinks;
  /** The streams open through answer links, cut when their link stops working. */
  linkStreams: LinkStreams;
  cursors: PageCursors;
  streams: OpenStreams;
  limits: RateLimits;
  quotas: Quotas;
  skills?: SkillCatalogSource;
  /** Aborted when the app starts closing: whatever waits on a turn stops waiting and answers. */
  closing: AbortSignal;
}
