/**
 * What workers share about a turn beyond Temporal's history: entries grouped in scopes (one per turn), written once
 * under a key derived from their content (a digest), so any worker can write any entry, a second write of the same key
 * is harmless, and nothing is ever updated in place.
 *
 * Retention is per scope: a scope that has not been written to for the store's retention is removed whole (Redis
 * expires it on its own; the file and PostgreSQL stores remove it when `sweep()` runs, which workers do periodically).
 */
export interface SharedStore {
  /** Where it keeps things, for logs (no secrets). */
  readonly description: string;
  /**
   * Stores `value` under `key`, and under each of `aliases` (the same value by other names), in `scope`, and refreshes
   * the scope's retention. One write: files link the aliases to the key's file (a file of their own where the file
   * system has no hard links); Redis and PostgreSQL hold the value once per name, in one command.
   */
  put(scope: string, key: string, value: string, aliases?: readonly string[]): Promise<void>;
  /** The value, or undefined when there is none (never written, or expired). Throws when the store cannot be read. */
  get(scope: string, key: string): Promise<string | undefined>;
  /** Removes the scopes idle for longer than the retention; how many it removed. */
  sweep(): Promise<number>;
  /** Returns at once even when the store is unreachable. */
  close(): Promise<void>;
}

/** What the workers do while the store cannot be used, for the logs. */
export const storeMeanwhile = 'turns send whole conversations (model calls cost more, nothing is lost)';

export class SharedStoreError extends Error {
  override name = 'SharedStoreError';
}

/** A scope or key as a name safe for file names and keys: kept when plain, else a hash of it. */
export function safeName(value: string, hash: (value: string) => string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(value) ? value : `h-${hash(value)}`;
}
