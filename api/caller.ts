import type { LinkGrant } from '../core/links';

/** Who sent a request: the API key's owner, the holder of a stream token, or the holder of an answer link. */
export interface Caller {
  id: string;
  operator: boolean;
  /** Set when the caller came with a stream token (`?token=`) rather than an API key; `link` when taken through one. */
  token?: { scope: 'read' | 'write'; expiresAt: number; link?: string };
  /** Set when the caller came through an answer link: `id` is then the session's user, and this says what it may do. */
  link?: LinkGrant;
}
