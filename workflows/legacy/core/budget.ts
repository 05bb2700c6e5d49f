/**
 * The user's daily token budget shared by concurrent turns: before each model round a run reserves the tokens the
 * round may take in its user's ledger of the day, and settles the reservation with the real usage after. The ledger
 * holds the settled tokens of the user's rounds of that day and the tokens held for rounds under way; each turn draws
 * from it under a ceiling set when it first reserves (the settled tokens then, which the API had counted, plus what
 * was left of the budget when the turn started), so turns running at once share one remainder instead of each
 * spending it whole.
 */

/** Where a run reserves: its user's ledger of one UTC day, under the ceiling of its turn (the root of its tree). */
export interface LedgerScope {
  user: string;
  /** YYYY-MM-DD (UTC): the day the turn started, whose budget it was given. */
  day: string;
  /** The turn's workflow id: skill runs under it reserve under the same ceiling. */
  turn: string;
}

export interface ReserveRequest {
  scope: LedgerScope;
  /** What the run may still use of the budget (its own count): the turn's ceiling is set from it when none is. */
  left: number;
  /** Tokens to hold for the round. */
  tokens: number;
}

/**
 * What the ledger granted: up to the tokens asked while anything is left under the ceiling (`tokens` held, maybe
 * fewer; 0 when the ledger could not be reached, so the run's own count is the only bound), or nothing, with what was
 * left (zero or less).
 */
export type Reservation = { granted: true; tokens: number } | { granted: false; available: number };

export interface SettleRequest {
  scope: LedgerScope;
  /** What the reservation held. */
  reserved: number;
  /** What the round used (0 when its model call failed). */
  used: number;
}

/** The UTC day of an ISO time or epoch milliseconds, as YYYY-MM-DD. */
export const utcDayOf = (at: string | number): string => new Date(at).toISOString().slice(0, 10);
