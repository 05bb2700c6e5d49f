import pg from 'pg';
import { HangGuard, NotAnsweringError } from '../hang-guard';
import type { OpsLog } from '../logging';
import { SharedStoreError, storeMeanwhile, type SharedStore } from './shared-store';

/** pg's own timeouts come this long after the guard's deadline: they free a connection that hangs, after the guard answered. */
const poolTimeoutMarginMs = 1_000;

/**
 * The store on PostgreSQL: entries in `skillflow_store_entries`, each scope's last write in `skillflow_store_scopes`.
 * The tables are created on first use. `sweep()` deletes the scopes idle for longer than the retention together with
 * their entries, in one statement, so a scope written to meanwhile keeps its new entries. No call waits longer than
 * `timeoutMs`: a PostgreSQL that hangs is logged once and fails the next calls at once until it answers (HangGuard);
 * one that refuses is logged once too, and its return at info.
 */
export class PostgresStore implements SharedStore {
  private readonly pool: pg.Pool;
  private readonly guard: HangGuard;
  private ready: Promise<void> | undefined;
  /** A call failed (not for a hang: HangGuard tracks that) and none succeeded since. */
  private failing = false;

  constructor(
    private readonly url: string,
    private readonly namespace: string,
    private readonly retentionMs: number,
    timeoutMs = 5_000,
    private readonly log?: OpsLog,
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: 4,
      connectionTimeoutMillis: timeoutMs + poolTimeoutMarginMs,
      query_timeout: timeoutMs + poolTimeoutMarginMs,
      idleTimeoutMillis: 30_000,
      application_name: 'skillflow-store',
    });
    // An idle connection that breaks (PostgreSQL restarted) is replaced on the next query; nothing to do here.
    this.pool.on('error', () => undefined);
    this.guard = new HangGuard({
      what: `store: ${this.description}`,
      deadlineMs: timeoutMs,
      probe: () => this.pool.query('SELECT 1'),
      meanwhile: storeMeanwhile,
      log,
    });
  }

  get description(): string {
    const parsed = new URL(this.url);
    return `PostgreSQL at ${parsed.host}${parsed.pathname} (namespace ${this.namespace})`;
  }

  async put(scope: string, key: string, value: string, aliases: readonly string[] = []): Promise<void> {
    const names = [key, ...aliases];
    const rows = names.map((_, index) => `($1, $2, $${index + 4}, $3)`).join(', ');
    await this.query(
      `WITH touched AS (
         INSERT INTO skillflow_store_scopes (namespace, scope, touched_at) VALUES ($1, $2, now())
         ON CONFLICT (namespace, scope) DO UPDATE SET touched_at = now()
       )
       INSERT INTO skillflow_store_entries (namespace, scope, key, value) VALUES ${rows}
       ON CONFLICT (namespace, scope, key) DO NOTHING`,
      [this.namespace, scope, Buffer.from(value, 'utf8'), ...names],
    );
  }

  async get(scope: string, key: string): Promise<string | undefined> {
    const result = await this.query<{ value: Buffer }>(
      'SELECT value FROM skillflow_store_entries WHERE namespace = $1 AND scope = $2 AND key = $3',
      [this.namespace, scope, key],
    );
    return result.rows[0]?.value.toString('utf8');
  }

  async sweep(): Promise<number> {
    const result = await this.query(
      `WITH gone AS (
         DELETE FROM skillflow_store_scopes WHERE namespace = $1 AND touched_at < now() - make_interval(secs => $2)
         RETURNING scope
       ), entries AS (
         DELETE FROM skillflow_store_entries WHERE namespace = $1 AND scope IN (SELECT scope FROM gone)
       )
       SELECT count(*)::int AS removed FROM gone`,
      [this.namespace, this.retentionMs / 1000],
    );
    return (result.rows[0] as { removed: number } | undefined)?.removed ?? 0;
  }

  async close(): Promise<void> {
    this.guard.close();
    await this.pool.end().catch(() => undefined);
  }

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      const result = await this.guard.call(async () => {
        this.ready ??= this.createTables().catch((err: unknown) => {
          this.ready = undefined;
          throw err;
        });
        await this.ready;
        return this.pool.query<R>(text, values);
      });
      if (this.failing) this.log?.(`store: ${this.description} answering again`, 'info');
      this.failing = false;
      return result;
    } catch (err) {
      const message = (err as Error).message;
      // A hang is the guard's to log; a refusal is logged here, once until a call succeeds again.
      if (!(err instanceof NotAnsweringError) && !this.failing) {
        this.failing = true;
        this.log?.(`store: ${this.description} unavailable (${message}): ${storeMeanwhile} until it is back`);
      }
      throw new SharedStoreError(`PostgreSQL store unavailable: ${message}`);
    }
  }

  /** Several workers may start at once: an advisory lock makes the first one create the tables and the rest wait. */
  private async createTables(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtext('skillflow_store_schema'))");
      await client.query(`CREATE TABLE IF NOT EXISTS skillflow_store_scopes (
        namespace text NOT NULL,
        scope text NOT NULL,
        touched_at timestamptz NOT NULL,
        PRIMARY KEY (namespace, scope)
      )`);
      await client.query(`CREATE TABLE IF NOT EXISTS skillflow_store_entries (
        namespace text NOT NULL,
        scope text NOT NULL,
        key text NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (namespace, scope, key)
      )`);
      await client.query(
        'CREATE INDEX IF NOT EXISTS skillflow_store_scopes_touched ON skillflow_store_scopes (namespace, touched_at)',
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
