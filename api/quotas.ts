import type { Client } from '@temporalio/client';
import { tokensOf } from '../core/model';
import type { Config } from '../lib/config';
import { HttpError } from './errors';
import { LockWaitError, type QuotaStore } from './quota-store';
import { closedTurnOutcome } from './turn-result';
import { runningTurnState, type TurnStates } from './turn-view';
import { workflowTypeClause } from '../workflows/definitions';
import { listAll, quoted } from './visibility';

type QuotaConfig = Pick<Config, 'maxSessionsPerUser' | 'userDailyTokens' | 'taskQueue'>;

/** Closed turns' usage never changes: kept, up to this many, so each is read from Temporal once per process. */
const maxCachedTurns = 50_000;

export { tokensOf };

/** The UTC day of a time, as YYYY-MM-DD. */
export const utcDay = (at: number): string => new Date(at).toISOString().slice(0, 10);

/**
 * Sessions per user and model tokens per user per UTC day. Temporal is the ledger: the open sessions are those its
 * visibility lists, and a day's tokens are the usage each of the user's turns of that day reports (its state while it
 * runs, its result once closed). The store adds what Temporal cannot know yet or any more: sessions created in the
 * last minute, sessions deleted in the last ten (visibility may list them for a while), and the tokens of deleted
 * sessions. So several API processes agree without a ledger of their own to keep in step, and a quota counts turns
 * that were started before it was set.
 */
export class Quotas {
  private readonly closedTurnTokens = new Map<string, number>();

  constructor(
    private readonly client: Client,
    private readonly config: QuotaConfig,
    private readonly store: QuotaStore,
    /** Where running turns' published states are (the live channel): a running turn's usage is read as GET reads it. */
    private readonly states?: TurnStates,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Creates a session unless the user has SKILLFLOW_MAX_SESSIONS_PER_USER open ones (429 `too_many_sessions`). Counting
   * and creating hold the user's lock, so two requests at once cannot both take the last place (503 `busy` when another
   * request held it too long). `sessionId` already open (an idempotent retry) is not a new session. Visibility is read
   * before the store, so a session deleted before it listed the session is among the deleted the store gives.
   */
  async createSession<T>(user: string, sessionId: string, create: () => Promise<T>): Promise<T> {
    const max = this.config.maxSessionsPerUser;
    if (max <= 0) return create();
    const counted = this.store.withLock(`sessions:${user}`, async () => {
      const open = new Set(await this.openSessionIds(user, max + 1));
      for (const deleted of await this.store.deletedSessions(user)) open.delete(deleted);
      for (const recent of await this.store.recentSessions(user)) open.add(recent);
      if (!open.has(sessionId) && open.size >= max) {
        throw new HttpError(
          429,
          'too_many_sessions',
          `${user} has ${open.size} open sessions; the limit is ${max}. Delete one (DELETE /v1/sessions/{id}) first.`,
          60,
        );
      }
      const created = await create();
      await this.store.addRecentSession(user, sessionId);
      return created;
    });
    return counted.catch((err: unknown) => {
      if (!(err instanceof LockWaitError)) throw err;
      throw new HttpError(
        503,
        'busy',
        `Another request of ${user} is still creating a session (it held the session count for ${err.waitedMs / 1000} s). Nothing was created; try again.`,
        Math.ceil(err.retryAfterMs / 1000),
      );
    });
  }

  /** Once a session is deleted: it no longer counts, on any API process, even while visibility still lists it. */
  async sessionDeleted(user: string, sessionId: string): Promise<void> {
    await this.store.addDeletedSession(user, sessionId);
  }

  /**
   * 429 `token_budget_exhausted` (retry-after: the next UTC midnight) once the user's tokens of today reach the budget;
   * otherwise what is left of it (undefined: no budget), which the new turn may use.
   */
  async checkTokenBudget(user: string): Promise<number | undefined> {
    const budget = this.config.userDailyTokens;
    if (budget <= 0) return undefined;
    const used = await this.tokensToday(user);
    if (used < budget) return budget - used;
    const now = this.now();
    const midnight = Date.UTC(
      new Date(now).getUTCFullYear(),
      new Date(now).getUTCMonth(),
      new Date(now).getUTCDate() + 1,
    );
    const seconds = Math.ceil((midnight - now) / 1000);
    throw new HttpError(
      429,
      'token_budget_exhausted',
      `${user} has used ${used.toLocaleString('en-US')} of ${budget.toLocaleString('en-US')} model tokens today (UTC); the budget renews at 00:00 UTC, in ${formatWait(seconds)}.`,
      seconds,
    );
  }

  /** Model tokens of the user's turns started today (UTC), deleted sessions included. */
  async tokensToday(user: string): Promise<number> {
    const now = this.now();
    const midnight = new Date(utcDay(now)).toISOString();
    const turns = await listAll(
      this.client,
      `${workflowTypeClause('turn')} AND TaskQueue = ${quoted(this.config.taskQueue)} AND SkillflowUser = ${quoted(user)} AND StartTime >= '${midnight}'`,
    );
    const counts = await Promise.all(turns.map((turn) => this.turnTokens(turn.workflowId, turn.runId, turn.status)));
    return counts.reduce((sum, tokens) => sum + tokens, 0) + (await this.store.spentTokens(user, utcDay(now)));
  }

  /** Before a session is deleted: what its turns of today spent stays counted (`sessionDeleted` follows the deletion). */
  async rememberSpending(user: string, sessionId: string): Promise<void> {
    if (this.config.userDailyTokens <= 0) return;
    const day = utcDay(this.now());
    const turns = await listAll(
      this.client,
      `${workflowTypeClause('turn')} AND SkillflowSession = ${quoted(sessionId)} AND StartTime >= '${new Date(day).toISOString()}'`,
    );
    const tokens = (
      await Promise.all(turns.map((turn) => this.turnTokens(turn.workflowId, turn.runId, turn.status)))
    ).reduce((a, b) => a + b, 0);
    if (tokens > 0) await this.store.addSpentTokens(user, day, tokens);
  }

  private async openSessionIds(user: string, max: number): Promise<string[]> {
    const sessions = await listAll(
      this.client,
      `${workflowTypeClause('session')} AND ExecutionStatus = 'Running' AND TaskQueue = ${quoted(this.config.taskQueue)} AND SkillflowUser = ${quoted(user)}`,
      max,
    );
    return sessions.map((session) => session.workflowId.slice('session-'.length));
  }

  private async turnTokens(workflowId: string, runId: string, status: string): Promise<number> {
    const key = `${workflowId}/${runId}`;
    const cached = this.closedTurnTokens.get(key);
    if (cached !== undefined) return cached;
    const handle = this.client.workflow.getHandle(workflowId, runId);
    try {
      let closedAs = status;
      if (status === 'RUNNING') {
        // Read as GET /v1/turns/:id reads it: the published state when it agrees with describe, else one query.
        const description = await handle.describe();
        closedAs = description.status.name;
        if (closedAs === 'RUNNING') {
          const state = await runningTurnState(this.client, handle, description, this.states);
          return state ? tokensOf(state.usage) : 0;
        }
      }
      // A turn that ended `failed` carries its result in its failure; one terminated or timed out has no usage to read.
      const outcome = closedAs === 'COMPLETED' || closedAs === 'FAILED' ? await closedTurnOutcome(handle) : undefined;
      const tokens = outcome && 'result' in outcome ? tokensOf(outcome.result.usage) : 0;
      if (this.closedTurnTokens.size >= maxCachedTurns) this.closedTurnTokens.clear();
      this.closedTurnTokens.set(key, tokens);
      return tokens;
    } catch {
      // Gone, or not answering (no worker to run the query): counted as nothing rather than failing the request.
      return 0;
    }
  }
}

function formatWait(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.ceil((seconds % 3600) / 60);
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min`;
}
