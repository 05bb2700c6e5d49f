import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../lib/config';
import type { Caller } from './auth';
import { HttpError } from './errors';

interface TokenClaims {
  /** user */
  u: string;
  /** operator */
  o: boolean;
  /** turn */
  t: string;
  /** expiry, ms since the epoch */
  e: number;
}

const prefix = 'st1';

/**
 * Short-lived, HMAC-signed tokens that let a browser open a turn's SSE or WebSocket stream with `?token=` (neither
 * EventSource nor the browser WebSocket can send an Authorization header). A token names its user and one turn.
 */
export class StreamTokens {
  constructor(
    private readonly secret: Buffer,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  issue(caller: Caller, turnId: string): { token: string; expiresAt: string } {
    const claims: TokenClaims = { u: caller.id, o: caller.operator, t: turnId, e: this.now() + this.ttlMs };
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return { token: `${prefix}.${payload}.${this.sign(payload)}`, expiresAt: new Date(claims.e).toISOString() };
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
      throw new HttpError(401, 'token_expired', 'That stream token has expired; get a new one from POST /v1/stream-tokens.');
    }
    return { id: claims.u, operator: claims.o === true, keyId: `token:${claims.u}` };
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

/** SKILLFLOW_STREAM_TOKEN_SECRET, else a secret generated once into the data dir (shared by API processes using it). */
export function resolveStreamTokenSecret(config: Pick<Config, 'streamTokenSecret' | 'dataDir'>): Buffer {
  if (config.streamTokenSecret) return Buffer.from(config.streamTokenSecret);
  const file = path.join(config.dataDir, 'stream-token-secret');
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
}
