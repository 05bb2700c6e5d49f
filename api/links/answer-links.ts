import { createHash, randomBytes } from 'node:crypto';
import type { LinkGrant } from '../../core/links';
import { linkPatternProblem } from '../../core/links';
import {
  defaultLinkSeconds,
  linkAuthErrors,
  maxLinksPerSession,
  type AnswerLink,
  type CreateLinkBody,
  type CreatedLink,
  type LinkAccess,
  type LinkGrantView,
} from '../../core/protocol';
import type { Caller } from '../caller';
import { HttpError, notFound, unavailableRetryAfterSeconds } from '../errors';
import type { LinkAccessTokens } from './access-tokens';
import type { LinkRevocations } from './revocations';
import type { LinkRecord, LinkStore } from './store';

const tokenPrefix = 'sfl1_';
/** Where a link's URL points: the web app, with the token in the fragment (never sent to a server, never logged). */
export const linkPagePath = '/app/';

const digestOf = (token: string) => createHash('sha256').update(token).digest('hex');
const iso = (ms: number) => new Date(ms).toISOString();

/** Answer links: made by a session's owner or an operator, used by whoever holds the URL (docs/security.md). */
export class AnswerLinks {
  constructor(
    private readonly store: LinkStore,
    readonly access: LinkAccessTokens,
    private readonly now: () => number,
    private readonly revocations: LinkRevocations,
  ) {}

  async create(
    session: { id: string; owner: string },
    createdBy: string,
    body: CreateLinkBody,
    origin: string,
  ): Promise<CreatedLink> {
    const checkpoints = body.checkpoints ?? null;
    const problem = checkpoints === null ? null : linkPatternProblem(checkpoints);
    if (problem) throw new HttpError(400, 'invalid_request', problem);
    const live = await this.guarded(() => this.store.ofSession(session.id));
    if (live.length >= maxLinksPerSession)
      throw new HttpError(
        429,
        'too_many_links',
        `Session ${session.id} has ${live.length} links that have not expired, the most it may have; revoke some (DELETE /v1/sessions/${session.id}/links/:linkId).`,
      );
    const token = tokenPrefix + randomBytes(32).toString('base64url');
    const now = this.now();
    const record: LinkRecord = {
      id: `lnk_${randomBytes(16).toString('base64url')}`,
      sessionId: session.id,
      owner: session.owner,
      createdBy,
      createdAt: now,
      expiresAt: now + (body.expiresInSeconds ?? defaultLinkSeconds) * 1000,
      revokedAt: null,
      checkpoints,
      messages: body.messages ?? false,
      tokenDigest: digestOf(token),
    };
    await this.guarded(() => this.store.add(record));
    return { ...viewOf(record), url: `${origin}${linkPagePath}#link=${token}` };
  }

  async list(sessionId: string): Promise<AnswerLink[]> {
    const records = await this.guarded(() => this.store.ofSession(sessionId));
    return records.sort((a, b) => b.createdAt - a.createdAt).map(viewOf);
  }

  async revoke(sessionId: string, linkId: string): Promise<void> {
    const record = await this.guarded(() => this.store.get(linkId));
    if (!record || record.sessionId !== sessionId) throw notFound(`Link ${linkId} of session ${sessionId}`);
    await this.guarded(() => this.store.revoke(linkId, this.now()));
    // Every API process cuts the streams open through it.
    await this.revocations.announce(linkId);
  }

  /** The link's token traded for a short-lived access token. */
  async exchange(token: string): Promise<LinkAccess> {
    const record = token.startsWith(tokenPrefix)
      ? await this.guarded(() => this.store.byToken(digestOf(token)))
      : undefined;
    const working = this.working(record);
    const access = this.access.issue(working.id, working.expiresAt);
    return { token: access.token, expiresAt: iso(access.expiresAt), link: grantViewOf(working) };
  }

  /** The caller an access token stands for (401 when the token or its link no longer works). */
  async callerOfAccessToken(token: string): Promise<Caller> {
    return this.callerOfLink(this.access.verify(token));
  }

  /** The caller a working link makes: the session's user, limited to what the link grants. */
  async callerOfLink(linkId: string): Promise<Caller> {
    const record = this.working(await this.guarded(() => this.store.get(linkId)));
    return { id: record.owner, operator: false, link: grantOf(record) };
  }

  /** What the caller's link allows and until when; 404 for a caller without one. */
  async describe(caller: Caller): Promise<LinkGrantView> {
    if (!caller.link) throw new HttpError(404, 'not_found', 'This request came with an API key, not an answer link.');
    return grantViewOf(this.working(await this.guarded(() => this.store.get(caller.link!.id))));
  }

  private working(record: LinkRecord | undefined): LinkRecord {
    if (!record)
      throw new HttpError(
        401,
        linkAuthErrors.unknown,
        'This answer link is not valid (mistyped, or it expired); ask whoever sent it for a new one.',
      );
    if (record.revokedAt !== null)
      throw new HttpError(
        401,
        linkAuthErrors.revoked,
        `This answer link was revoked at ${iso(record.revokedAt)}; ask whoever sent it for a new one.`,
      );
    if (record.expiresAt <= this.now())
      throw new HttpError(
        401,
        linkAuthErrors.expired,
        `This answer link expired at ${iso(record.expiresAt)}; ask whoever sent it for a new one.`,
      );
    return record;
  }

  private async guarded<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof HttpError) throw err;
      const refusal = new HttpError(
        503,
        'unavailable',
        'The store of answer links (Redis) is not reachable right now; try again shortly.',
        unavailableRetryAfterSeconds,
      );
      throw Object.assign(refusal, { cause: err });
    }
  }
}

function grantOf(record: LinkRecord): LinkGrant {
  return { id: record.id, sessionId: record.sessionId, checkpoints: record.checkpoints, messages: record.messages };
}

function grantViewOf(record: LinkRecord): LinkGrantView {
  return { ...grantOf(record), expiresAt: iso(record.expiresAt) };
}

function viewOf(record: LinkRecord): AnswerLink {
  return {
    id: record.id,
    sessionId: record.sessionId,
    scope: { sessionId: record.sessionId, checkpoints: record.checkpoints, messages: record.messages },
    createdAt: iso(record.createdAt),
    createdBy: record.createdBy,
    expiresAt: iso(record.expiresAt),
    revokedAt: record.revokedAt === null ? null : iso(record.revokedAt),
  };
}
