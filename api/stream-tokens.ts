import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { ConfigError, minSecretBytes, type Config } from '../lib/config';
import type { StreamTokenScope } from '../core/protocol';
import type { Caller } from './caller';
import { HttpError } from './errors';
import { readOrCreateSecretFile } from '../lib/secret-files';

interface TokenClaims {
  /** user */
  u: string;
  /** operator */
  o: boolean;
  /** turn */
  t: string;
  /** expiry, ms since the epoch */
  e: number;
  /** scope: "w" may answer and cancel; anything else reads only */
  s?: 'r' | 'w';
  /** the answer link it was taken through: it works only while the link does, within the link's scope */
  l?: string;
}

const prefix = 'st1';

/**
 * Short-lived, HMAC-signed tokens that let a browser open a turn's SSE or WebSocket stream with `?token=` (neither
 * EventSource nor the browser WebSocket can send an Authorization header). A token names its user, one turn, and its
 * scope: read-only unless `write` was asked for, which lets a WebSocket answer checkpoints and cancel the turn.
 */
export class StreamTokens {
  constructor(
    private readonly secret: Buffer,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (secret.length < minSecretBytes)
      throw new ConfigError(`The stream token secret has ${secret.length} bytes; it needs at least ${minSecretBytes}.`);
  }

  issue(
    caller: Caller,
    turnId: string,
    scope: StreamTokenScope = 'read',
  ): { token: string; expiresAt: string; scope: StreamTokenScope } {
    const claims: TokenClaims = {
      u: caller.id,
      o: caller.operator,
      t: turnId,
      e: this.now() + this.ttlMs,
      s: scope === 'write' ? 'w' : 'r',
      ...(caller.link ? { l: caller.link.id } : {}),
    };
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return { token: `${prefix}.${payload}.${this.sign(payload)}`, expiresAt: new Date(claims.e).toISOString(), scope };
  }

  /** The caller the token stands for; 401 when it is forged, expired, or for another turn. */
  verify(token: string, turnId: string): Caller {
    const [version, payload, signature] = token.split('.');
    if (version !== prefix || !payload || !signature || !this.signatureMatches(payload, signature)) {
      throw new HttpError(401, 'invalid_token', 'That stream token is not valid.');
    }
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
    } catch {
      throw new HttpError(401, 'invalid_token', 'That stream token is not valid.');
    }
    if (claims.t !== turnId) throw new HttpError(401, 'invalid_token', 'That stream token is for another turn.');
    if (!(claims.e > this.now())) {
      throw new HttpError(
        401,
        'token_expired',
        'That stream token has expired; get a new one from POST /v1/stream-tokens.',
      );
    }
    return {
      id: claims.u,
      operator: claims.o === true,
      token: {
        scope: claims.s === 'w' ? 'write' : 'read',
        expiresAt: claims.e,
        ...(typeof claims.l === 'string' ? { link: claims.l } : {}),
      },
    };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(`${prefix}.${payload}`).digest('base64url');
  }

  private signatureMatches(payload: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/**
 * SKILLFLOW_STREAM_TOKEN_SECRET (at least 32 bytes, checked with the configuration), else a secret generated once
 * into the secrets dir (SKILLFLOW_SECRETS_DIR, by default the data dir; shared by the API processes using it): created exclusively and readable by its owner only, and
 * refused when it is shorter than 32 bytes (an empty file would make every token forgeable) or others may read it.
 */
export function resolveStreamTokenSecret(config: Pick<Config, 'streamTokenSecret' | 'secretsDir'>): Buffer {
  if (config.streamTokenSecret) return Buffer.from(config.streamTokenSecret);
  const file = path.join(config.secretsDir, 'stream-token-secret');
  const { value } = readOrCreateSecretFile(file, () => randomBytes(minSecretBytes).toString('base64url'));
  const secret = Buffer.from(value, 'base64url');
  if (secret.length < minSecretBytes) {
    throw new ConfigError(
      `${file} holds ${secret.length} bytes of secret; at least ${minSecretBytes} are needed. Delete it to generate a new one.`,
    );
  }
  return secret;
}
