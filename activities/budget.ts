import type { ReserveRequest, Reservation, SettleRequest } from '../core/budget';
import { MemoryTokenLedger, type TokenLedger } from '../lib/budget';

export interface BudgetActivityDeps {
  /** Where the users' day ledgers are (lib/budget); absent: this worker's memory. */
  ledger?: TokenLedger;
}

/** Reservations of model tokens in the users' day ledgers (core/budget.ts), before and after each model round. */
export function createBudgetActivities(deps: BudgetActivityDeps = {}) {
  const ledger = deps.ledger ?? new MemoryTokenLedger();
  return {
    /** Holds tokens for a model round, or says nothing is left under the turn's ceiling. */
    async reserveTokens(input: ReserveRequest): Promise<Reservation> {
      return ledger.reserve(input);
    },
    /** Replaces a round's reservation with what it used. */
    async settleTokens(input: SettleRequest): Promise<void> {
      await ledger.settle(input);
    },
  };
}
