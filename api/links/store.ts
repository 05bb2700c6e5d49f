import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../lib/config';
import type { GuardedRedis } from '../../lib/guarded-redis';
import { maxLinkSeconds } from '../../core/protocol';

/** An answer link as kept: its token only as a SHA-256 digest. Times in ms since the epoch. */
export interface LinkRecord {
  id: string;
  sessionId: string;
  /** The session's user: a link's holder acts as this user within the link's scope. */
  owner: string;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  checkpoints: string | null;
  messages: boolean;
  tokenDigest: string;
}

/** How long a link is kept after it expired, so its holder is told it expired rather than that it is unknown. */
export const expiredLinkKeptMs = 7 * 24 * 3600_000;
const removalOf = (record: LinkRecord) => record.expiresAt + expiredLinkKeptMs;

/**
 * Where links are kept: Redis when SKILLFLOW_REDIS_URL is set, so a link made on one API process works on every other
 * and a revocation holds on all of them at once; otherwise a file of the API's data dir (one API process), or memory
 * (an app embedded in tests). A revoked link
 * stays, marked; an expired one is kept `expiredLinkKeptMs` more, then removed. `get` and `byToken` return both (the
 * caller decides what still works). A store that cannot be read throws: the caller refuses the request (503) rather
 * than guess.
 */
export interface LinkStore {
  add(record: LinkRecord): Promise<void>;
  get(id: string): Promise<LinkRecord | undefined>;
  byToken(digest: string): Promise<LinkRecord | undefined>;
  /** The session's links that have not expired (revoked ones included), in no particular order. */
  ofSession(sessionId: string): Promise<LinkRecord[]>;
  /** Marks the link revoked at `at`; its record as it now is, or undefined when there is none. */
  revoke(id: string, at: number): Promise<LinkRecord | undefined>;
}

export class MemoryLinkStore implements LinkStore {
  private readonly links = new Map<string, LinkRecord>();
  private readonly tokens = new Map<string, string>();

  constructor(private readonly now: () => number = Date.now) {}

  async add(record: LinkRecord): Promise<void> {
    this.dropExpired();
    this.links.set(record.id, { ...record });
    this.tokens.set(record.tokenDigest, record.id);
  }

  async get(id: string): Promise<LinkRecord | undefined> {
    this.dropExpired();
    const record = this.links.get(id);
    return record && { ...record };
  }

  async byToken(digest: string): Promise<LinkRecord | undefined> {
    this.dropExpired();
    const id = this.tokens.get(digest);
    return id === undefined ? undefined : this.get(id);
  }

  async ofSession(sessionId: string): Promise<LinkRecord[]> {
    this.dropExpired();
    const now = this.now();
    return [...this.links.values()]
      .filter((record) => record.sessionId === sessionId && record.expiresAt > now)
      .map((record) => ({ ...record }));
  }

  async revoke(id: string, at: number): Promise<LinkRecord | undefined> {
    const record = this.links.get(id);
    if (!record) return undefined;
    record.revokedAt ??= at;
    return { ...record };
  }

  /** Every record kept, expired ones past keeping dropped first. */
  records(): LinkRecord[] {
    this.dropExpired();
    return [...this.links.values()].map((record) => ({ ...record }));
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [id, record] of this.links) {
      if (removalOf(record) > now) continue;
      this.links.delete(id);
      this.tokens.delete(record.tokenDigest);
    }
  }
}

/**
 * The links of an API without Redis in a file of its data dir, readable by its owner only, so that they survive the
 * API's restarts (as its key and its stream-token secret do). Read once when the API starts; each change writes the
 * whole file again (a temporary file renamed over it, so a crash leaves the old one or the new one). One API process
 * per file: another writing it would drop this one's changes.
 */
export class FileLinkStore implements LinkStore {
  private readonly memory: MemoryLinkStore;

  constructor(
    private readonly file: string,
    now: () => number = Date.now,
  ) {
    this.memory = new MemoryLinkStore(now);
    for (const record of readLinkFile(file)) void this.memory.add(record);
  }

  async add(record: LinkRecord): Promise<void> {
    await this.memory.add(record);
    this.save();
  }

  get(id: string): Promise<LinkRecord | undefined> {
    return this.memory.get(id);
  }

  byToken(digest: string): Promise<LinkRecord | undefined> {
    return this.memory.byToken(digest);
  }

  ofSession(sessionId: string): Promise<LinkRecord[]> {
    return this.memory.ofSession(sessionId);
  }

  async revoke(id: string, at: number): Promise<LinkRecord | undefined> {
    const record = await this.memory.revoke(id, at);
    if (record) this.save();
    return record;
  }

  private save(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      fs.writeFileSync(temporary, JSON.stringify({ links: this.memory.records() }), { mode: 0o600, flag: 'wx' });
      fs.renameSync(temporary, this.file);
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
}

function readLinkFile(file: string): LinkRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  try {
    const links = (JSON.parse(text) as { links?: unknown }).links;
    if (!Array.isArray(links)) throw new Error('no "links" list');
    return links as LinkRecord[];
  } catch (err) {
    throw new ConfigError(
      `${file}, where the API keeps its answer links, cannot be read (${(err as Error).message}): delete it to start afresh (the links it held stop working).`,
    );
  }
}

/**
 * The links in Redis: `<prefix>link:<id>` (the record as JSON) and `<prefix>link-token:<digest>` (the id) expire with
 * the link; `<prefix>link-session:<sessionId>` is a sorted set of the session's link ids by expiry.
 */
export class RedisLinkStore implements LinkStore {
  constructor(
    private readonly redis: GuardedRedis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  async add(record: LinkRecord): Promise<void> {
    const session = this.sessionKey(record.sessionId);
    await this.redis.run((redis) =>
      redis
        .multi()
        .set(this.linkKey(record.id), JSON.stringify(record), 'PXAT', removalOf(record))
        .set(this.tokenKey(record.tokenDigest), record.id, 'PXAT', removalOf(record))
        .zadd(session, record.expiresAt, record.id)
        // Every link of the session expires within the longest lifetime of the last one added.
        .pexpire(session, maxLinkSeconds * 1000 + 60_000)
        .exec()
        .then(failedTransaction),
    );
  }

  async get(id: string): Promise<LinkRecord | undefined> {
    const json = await this.redis.run((redis) => redis.get(this.linkKey(id)));
    return json === null ? undefined : (JSON.parse(json) as LinkRecord);
  }

  async byToken(digest: string): Promise<LinkRecord | undefined> {
    const id = await this.redis.run((redis) => redis.get(this.tokenKey(digest)));
    return id === null ? undefined : this.get(id);
  }

  async ofSession(sessionId: string): Promise<LinkRecord[]> {
    const key = this.sessionKey(sessionId);
    await this.redis.run((redis) => redis.zremrangebyscore(key, '-inf', this.now()));
    const ids = await this.redis.run((redis) => redis.zrange(key, 0, -1));
    if (ids.length === 0) return [];
    const values = await this.redis.run((redis) => redis.mget(ids.map((id) => this.linkKey(id))));
    const now = this.now();
    return values
      .map((json) => (json === null ? undefined : (JSON.parse(json) as LinkRecord)))
      .filter((record): record is LinkRecord => record !== undefined && record.expiresAt > now);
  }

  async revoke(id: string, at: number): Promise<LinkRecord | undefined> {
    const record = await this.get(id);
    if (!record) return undefined;
    if (record.revokedAt !== null) return record;
    const revoked = { ...record, revokedAt: at };
    await this.redis.run((redis) => redis.set(this.linkKey(id), JSON.stringify(revoked), 'KEEPTTL'));
    return revoked;
  }

  private linkKey(id: string): string {
    return `${this.prefix}link:${id}`;
  }

  private tokenKey(digest: string): string {
    return `${this.prefix}link-token:${digest}`;
  }

  private sessionKey(sessionId: string): string {
    return `${this.prefix}link-session:${sessionId}`;
  }
}

function failedTransaction(results: [Error | null, unknown][] | null): void {
  const failed = results?.find(([err]) => err);
  if (!results || failed) throw new Error(`Redis: storing the link failed (${failed?.[0]?.message ?? 'aborted'})`);
}
