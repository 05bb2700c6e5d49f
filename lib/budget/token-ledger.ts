import type { LedgerScope, ReserveRequest, Reservation, SettleRequest } from '../../core/budget';

/**
 * The users' day ledgers of model tokens (core/budget.ts): reservations before model rounds, settled with the real
 * usage after. In Redis when one is configured, so every worker shares them; in this process's memory otherwise.
 */
export interface TokenLedger {
  /** Where it keeps the ledgers, for logs. */
  readonly description: string;
  reserve(request: ReserveRequest): Promise<Reservation>;
  settle(request: SettleRequest): Promise<void>;
  close(): Promise<void>;
}

/** How long a day's ledger and a turn's ceiling are kept: past the day, for turns still running after midnight. */
export const ledgerRetentionMs = 3 * 24 * 3600_000;

/** The ledgers in this process's memory: shared by the turns whose activities this worker runs. */
export class MemoryTokenLedger implements TokenLedger {
  readonly description = "this worker's memory";
  private readonly ledgers = new Map<string, DayLedger>();
  private readonly ceilings = new Map<string, { ceiling: number; day: string }>();

  async reserve({ scope, left, tokens }: ReserveRequest): Promise<Reservation> {
    this.forgetOlderThan(scope.day);
    const ledger = this.ledgerOf(scope);
    const ceiling = this.ceilings.get(scope.turn)?.ceiling ?? ledger.settled + left;
    this.ceilings.set(scope.turn, { ceiling, day: scope.day });
    const available = ceiling - ledger.settled - ledger.held;
    if (available <= 0) return { granted: false, available };
    const granted = Math.min(tokens, available);
    ledger.held += granted;
    return { granted: true, tokens: granted };
  }

  async settle({ scope, reserved, used }: SettleRequest): Promise<void> {
    const ledger = this.ledgerOf(scope);
    ledger.held -= reserved;
    ledger.settled += used;
  }

  async close(): Promise<void> {}

  private ledgerOf(scope: LedgerScope): DayLedger {
    const key = ledgerKey(scope);
    const ledger = this.ledgers.get(key) ?? { settled: 0, held: 0 };
    this.ledgers.set(key, ledger);
    return ledger;
  }

  /** Drops the ledgers and ceilings of days before the retention. */
  private forgetOlderThan(day: string): void {
    const oldest = new Date(Date.parse(day) - ledgerRetentionMs).toISOString().slice(0, 10);
    for (const key of this.ledgers.keys()) if (key.slice(-10) < oldest) this.ledgers.delete(key);
    for (const [turn, { day: of }] of this.ceilings) if (of < oldest) this.ceilings.delete(turn);
  }
}

/**
 * A user's day: the tokens of settled rounds (their real usage), and those held for rounds under way. A turn's ceiling
 * starts from the settled tokens only: those the API had counted when it gave the turn what was left of the budget
 * (a running turn's usage is in its state), while rounds under way were not.
 */
interface DayLedger {
  settled: number;
  held: number;
}

/** One ledger per user and day; the day last, as YYYY-MM-DD. */
export const ledgerKey = (scope: LedgerScope): string => `${scope.user}\0${scope.day}`;
