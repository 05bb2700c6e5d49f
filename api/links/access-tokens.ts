import { createHmac, timingSafeEqual } from 'node:crypto';
import { ConfigError, minSecretBytes } from '../../lib/config';
import { HttpError } from '../errors';

const prefix = 'sfa1';

/**
 * The short-lived tokens a page gets for an answer link (POST /v1/links/exchange): HMAC-signed with the stream-token
 * secret (so every API process sharing it accepts them; the prefix keeps them apart from stream tokens), naming only
 * the link and an expiry. What the link allows, and whether it still works, is read from the link store on every
 * request, so a revocation holds at once.
 */
export class LinkAccessTokens {
  constructor(
    private readonly secret: Buffer,
    readonly ttlMs: number,
    private readonly now: () => number,
  ) {
    if (secret.length < minSecretBytes)
      throw new ConfigError(`The access token secret has ${secret.length} bytes; it needs at least ${minSecretBytes}.`);
  }

  static recognizes(token: string): boolean {
    return token.startsWith(`${prefix}.`);
  }

  /** A token for the link, valid for the TTL but never beyond the link's own expiry. */
  issue(linkId: string, linkExpiresAt: number): { token: string; expiresAt: number } {
    const expiresAt = Math.min(this.now() + this.ttlMs, linkExpiresAt);
    const payload = Buffer.from(JSON.stringify({ k: linkId, e: expiresAt })).toString('base64url');
    return { token: `${prefix}.${payload}.${this.sign(payload)}`, expiresAt };
  }

  /** The link the token stands for; 401 when it is forged or has expired. */
  verify(token: string): string {
    const [version, payload, signature, ...rest] = token.split('.');
    if (version !== prefix || !payload || !signature || rest.length > 0 || !this.matches(payload, signature))
      throw new HttpError(401, 'invalid_token', 'That access token is not valid; open the answer link again.');
    let claims: { k?: unknown; e?: unknown };
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
    } catch {
      throw new HttpError(401, 'invalid_token', 'That access token is not valid; open the answer link again.');
    }
    if (typeof claims.k !== 'string' || typeof claims.e !== 'number')
      throw new HttpError(401, 'invalid_token', 'That access token is not valid; open the answer link again.');
    if (!(claims.e > this.now()))
      throw new HttpError(
        401,
        'token_expired',
        'That access token has expired; exchange the link again (POST /v1/links/exchange).',
      );
    return claims.k;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(`${prefix}.${payload}`).digest('base64url');
  }

  private matches(payload: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
