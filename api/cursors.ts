import { createHmac, timingSafeEqual } from 'node:crypto';
import { HttpError } from './errors';

/**
 * Page cursors handed to clients: Temporal's page token, signed together with the visibility query it belongs to.
 * A cursor that was altered, or reused with other filters, is refused before Temporal sees it (Temporal answers a
 * garbled token with an opaque internal error, after retries).
 */
export class PageCursors {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('skillflow page cursors').digest();
  }

  encode(token: Uint8Array, query: string): string {
    const body = Buffer.from(token).toString('base64url');
    return `${body}.${this.sign(body, query)}`;
  }

  decode(cursor: string, query: string): Buffer {
    const [body, signature] = cursor.split('.');
    const expected = body ? Buffer.from(this.sign(body, query)) : Buffer.alloc(0);
    const given = Buffer.from(signature ?? '');
    if (!body || expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new HttpError(400, 'invalid_cursor', 'That cursor is not valid for this listing; start again without one.');
    }
    return Buffer.from(body, 'base64url');
  }

  private sign(body: string, query: string): string {
    return createHmac('sha256', this.key).update(`${body}\n${query}`).digest('base64url').slice(0, 22);
  }
}
