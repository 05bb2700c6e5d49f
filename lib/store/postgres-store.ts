import pg from 'pg';
import { SharedStoreError, type SharedStore } from './shared-store';

/**
 * The store on PostgreSQL: entries in `skillflow_store_entries`, each scope's last write in `skillflow_store_scopes`.
 * The tables are created on first use. `sweep()` deletes the scopes idle for longer than the retention together with
 * their entries, in one statement, so a scope written to meanwhile keeps its new entries.
 */
export class PostgresStore implements SharedStore {
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly namespace: string,
    private readonly retentionMs: number,
    timeoutMs = 5_000,
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: 4,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      idleTimeoutMillis: 30_000,
      application_name: 'skillflow-store',
    });
    // An idle connection that breaks (PostgreSQL restarted) is replaced on the next query; nothing to do here.
    this.pool.on('error', () => undefined);
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
    await this.pool.end().catch(() => undefined);
  }

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      this.ready ??= this.createTables().catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      });
      await this.ready;
      return await this.pool.query<R>(text, values);
    } catch (err) {
      throw new SharedStoreError(`PostgreSQL store unavailable: ${(err as Error).message}`);
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
      await client.query('CREATE INDEX IF NOT EXISTS skillflow_store_scopes_touched ON skillflow_store_scopes (namespace, touched_at)');
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
