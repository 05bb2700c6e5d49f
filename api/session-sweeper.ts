import type { Client } from '@temporalio/client';
import { sessionWorkflowId } from '../core/turn';
import type { Config } from '../lib/config';
import { sessionStateQuery, turnStateQuery, workflowTypeClause } from '../workflows/definitions';
import type { Caller } from './caller';
import type { QuotaStore } from './quota-store';
import type { Quotas } from './quotas';
import { deleteSession } from './sessions';
import { listAll, quoted } from './visibility';
import { queryDeadlineMs } from './deadlines';

/** Sessions looked at per sweep: the rest wait for the next one. */
const maxPerSweep = 500;
const retention: Caller = { id: 'retention', operator: true };

/**
 * Closes and removes sessions nobody used for SKILLFLOW_SESSION_IDLE_MS: no turn running, and no message, answer or
 * turn ending for that long (a turn waiting at a checkpoint counts from when it started to wait). It runs in the API
 * (which has the Temporal client) every tenth of the idle time (at least every second, at most every ten minutes);
 * with Redis, one API process per round does the work. Sessions whose state cannot be read (no worker) are left for
 * a later round.
 */
export class SessionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;
  readonly everyMs: number;

  constructor(
    private readonly client: Client,
    private readonly config: Pick<Config, 'sessionIdleMs' | 'taskQueue'>,
    private readonly store: QuotaStore,
    private readonly quotas: Quotas,
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.everyMs = Math.min(600_000, Math.max(1_000, Math.floor(config.sessionIdleMs / 10)));
  }

  start(): void {
    if (this.config.sessionIdleMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (!this.running) {
        this.running = this.sweep()
          .catch((err: unknown) => {
            this.log(`idle sessions: sweep failed (${(err as Error).message}); trying again in ${this.everyMs} ms`);
            return [];
          })
          .finally(() => (this.running = undefined));
      }
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round: the ids of the sessions it removed. */
  async sweep(): Promise<string[]> {
    if (!(await this.store.claim('idle-sweep', this.everyMs))) return [];
    const cutoff = this.now() - this.config.sessionIdleMs;
    // A run that started after the cutoff (created, or continued as new after a turn) cannot be idle yet.
    const candidates = await listAll(
      this.client,
      `${workflowTypeClause('session')} AND ExecutionStatus = 'Running' AND TaskQueue = ${quoted(this.config.taskQueue)} AND StartTime < '${new Date(cutoff).toISOString()}'`,
      maxPerSweep,
    );
    const removed: string[] = [];
    for (const candidate of candidates) {
      const sessionId = candidate.workflowId.slice('session-'.length);
      const usage = await this.lastActivity(sessionId);
      if (usage === null || usage.last >= cutoff) continue;
      await this.quotas.rememberSpending(usage.user, sessionId);
      await deleteSession(this.client, retention, sessionId);
      await this.quotas.sessionDeleted(usage.user, sessionId);
      removed.push(sessionId);
      this.log(`idle sessions: removed session ${sessionId}, unused since ${new Date(usage.last).toISOString()}`);
    }
    return removed;
  }

  /** When the session was last used, in ms (Infinity while a turn runs), and its user; null when it cannot be read. */
  private async lastActivity(sessionId: string): Promise<{ last: number; user: string } | null> {
    const state = await this.query(() =>
      this.client.workflow.getHandle(sessionWorkflowId(sessionId)).query(sessionStateQuery),
    );
    if (!state) return null;
    let last = Date.parse(state.createdAt);
    for (const turn of state.turns)
      last = Math.max(last, Date.parse(turn.createdAt), turn.endedAt ? Date.parse(turn.endedAt) : 0);
    if (state.activeTurnId) {
      const turn = await this.query(() => this.client.workflow.getHandle(state.activeTurnId!).query(turnStateQuery));
      if (!turn) return null;
      if (turn.status !== 'waiting') return { last: Infinity, user: state.userId };
      last = Math.max(last, Date.parse(turn.updatedAt));
    }
    return { last, user: state.userId };
  }

  private async query<T>(read: () => Promise<T>): Promise<T | null> {
    try {
      return await this.client.connection.withDeadline(this.now() + queryDeadlineMs, read);
    } catch {
      return null;
    }
  }
}
