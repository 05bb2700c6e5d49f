import { Type, type Static } from '@sinclair/typebox';
import { linkPatternSyntax } from '../links';
import { Nullable, Timestamp } from '../schemas/common';
import { SessionId } from './common';

/** Answer links (docs/api.md, docs/security.md): a URL that lets whoever opens it answer one session's checkpoints. */

export const minLinkSeconds = 60;
export const maxLinkSeconds = 30 * 24 * 3600;
export const defaultLinkSeconds = 7 * 24 * 3600;
/** Live (unexpired) links one session may have, revoked ones included. */
export const maxLinksPerSession = 100;

export const LinkId = Type.String({ pattern: '^lnk_[A-Za-z0-9_-]{16,32}$', description: 'Link id' });

export const LinkParams = Type.Object({ id: SessionId, linkId: LinkId });

export const CreateLinkBody = Type.Object(
  {
    checkpoints: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 64,
          description: `Only checkpoints whose names match this pattern (${linkPatternSyntax}), e.g. question*; null or left out: every checkpoint of the session`,
        }),
      ),
    ),
    messages: Type.Optional(
      Type.Boolean({ default: false, description: 'Whether the link may send messages (start turns) in the session' }),
    ),
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: minLinkSeconds,
        maximum: maxLinkSeconds,
        default: defaultLinkSeconds,
        description: 'How long the link works (default 7 days, at most 30)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateLinkBody = Static<typeof CreateLinkBody>;

export const LinkScope = Type.Object({
  sessionId: SessionId,
  checkpoints: Nullable(Type.String({ description: 'The checkpoint name pattern; null: every checkpoint' })),
  messages: Type.Boolean(),
});
export type LinkScope = Static<typeof LinkScope>;

export const AnswerLink = Type.Object(
  {
    id: LinkId,
    sessionId: SessionId,
    scope: LinkScope,
    createdAt: Timestamp,
    createdBy: Type.String({ description: 'The user whose key made the link' }),
    expiresAt: Timestamp,
    revokedAt: Nullable(Timestamp),
  },
  { $id: 'AnswerLink' },
);
export type AnswerLink = Static<typeof AnswerLink>;

export const CreatedLink = Type.Object({
  ...AnswerLink.properties,
  url: Type.String({
    description:
      "The link to send: the API's /app/ page with the link's token in the fragment (#link=...), which browsers never send to a server. The token is shown only here.",
  }),
});
export type CreatedLink = Static<typeof CreatedLink>;

export const LinkList = Type.Object({
  links: Type.Array(Type.Ref(AnswerLink), { description: "The session's links that have not expired, newest first" }),
});

export const LinkExchangeBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 256, description: "The link's token (the #link= fragment)" }) },
  { additionalProperties: false },
);

/** What a page that holds a link's access token may do, and until when the link works. */
export const LinkGrantView = Type.Object({
  id: LinkId,
  sessionId: SessionId,
  checkpoints: Nullable(Type.String()),
  messages: Type.Boolean(),
  expiresAt: Timestamp,
});
export type LinkGrantView = Static<typeof LinkGrantView>;

export const LinkAccess = Type.Object({
  token: Type.String({
    description:
      'A short-lived access token: send it as "Authorization: Bearer <token>" on the routes the link allows; exchange the link again when it expires',
  }),
  expiresAt: Timestamp,
  link: LinkGrantView,
});
export type LinkAccess = Static<typeof LinkAccess>;

/** The 401 codes of a link or its access token. */
export const linkAuthErrors = {
  unknown: 'link_unknown',
  expired: 'link_expired',
  revoked: 'link_revoked',
} as const;
