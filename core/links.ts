/**
 * What an answer link grants (docs/security.md): one session's turns to follow, its checkpoints to answer (all of them,
 * or those whose names match a pattern), and messages only when the link says so. Pure: the API maps each request to a
 * `LinkRequest` and carries out the verdict.
 */

/** The part of a link that decides what its holder may do. */
export interface LinkGrant {
  id: string;
  sessionId: string;
  /** A glob over checkpoint names (`*` any run of characters, `?` one); null: every checkpoint. */
  checkpoints: string | null;
  messages: boolean;
}

/** What a request asks of a link, as the API reads it from the route. */
export type LinkRequest =
  | { kind: 'read'; sessionId: string }
  | { kind: 'message'; sessionId: string }
  | { kind: 'answer'; sessionId: string; checkpointName: string }
  | { kind: 'self' }
  | { kind: 'other'; route: string };

export const linkRefusals = {
  wrongSession: 'link_wrong_session',
  checkpointNotAllowed: 'link_checkpoint_not_allowed',
  messagesNotAllowed: 'link_messages_not_allowed',
  routeNotAllowed: 'link_route_not_allowed',
} as const;
export type LinkRefusalCode = (typeof linkRefusals)[keyof typeof linkRefusals];

export type LinkVerdict = { allowed: true } | { allowed: false; code: LinkRefusalCode; message: string };

const allowed: LinkVerdict = { allowed: true };
const refuse = (code: LinkRefusalCode, message: string): LinkVerdict => ({ allowed: false, code, message });

export function linkVerdict(grant: LinkGrant, request: LinkRequest): LinkVerdict {
  if (request.kind === 'self') return allowed;
  if (request.kind === 'other') {
    return refuse(
      linkRefusals.routeNotAllowed,
      `An answer link lets you follow session ${grant.sessionId} and answer its checkpoints; ${request.route} is not part of that. Use an API key.`,
    );
  }
  if (request.sessionId !== grant.sessionId) {
    return refuse(
      linkRefusals.wrongSession,
      `This answer link is for session ${grant.sessionId}, not ${request.sessionId}.`,
    );
  }
  if (request.kind === 'message' && !grant.messages) {
    return refuse(
      linkRefusals.messagesNotAllowed,
      'This answer link does not allow sending messages; ask whoever sent it for a link that does.',
    );
  }
  if (
    request.kind === 'answer' &&
    grant.checkpoints !== null &&
    !matchesLinkPattern(grant.checkpoints, request.checkpointName)
  ) {
    return refuse(
      linkRefusals.checkpointNotAllowed,
      `This answer link answers only checkpoints named ${grant.checkpoints}; checkpoint ${request.checkpointName} is not one of them.`,
    );
  }
  return allowed;
}

/** Checkpoint names are lowercase letters, digits, _ and - (tool approvals: `tool:NAME`); a pattern adds * and ?. */
export const linkPatternSyntax =
  '1-64 characters of a-z, 0-9, _, -, : and the wildcards * (any run) and ? (one character)';
const patternShape = /^[a-z0-9_:*?-]{1,64}$/;

/** The problem with a pattern, in words, or null when it is valid. */
export function linkPatternProblem(pattern: string): string | null {
  return patternShape.test(pattern)
    ? null
    : `checkpoints ${JSON.stringify(pattern)} is not a checkpoint name pattern: use ${linkPatternSyntax}, e.g. question*.`;
}

/**
 * Glob matching without backtracking blow-up: the classic two-pointer walk that remembers only the last `*`, so a
 * pattern of m characters matches a name of n in O(n·m) at worst.
 */
export function matchesLinkPattern(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === name[n])) {
      p += 1;
      n += 1;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p;
      resume = n;
      p += 1;
    } else if (star >= 0) {
      p = star + 1;
      resume += 1;
      n = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}
