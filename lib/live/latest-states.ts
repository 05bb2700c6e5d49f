import { supersedes, type TurnSnapshot } from '../../core/turn-snapshot';
import { terminalStatuses } from '../../core/turn';

/** How many turns' states one process keeps; beyond it the least recently written go (their GET asks the workflow). */
export const maxKeptStates = 10_000;

/**
 * The latest state of each turn, in this process's memory: the in-process and local-socket channels' store. A turn
 * that ended is forgotten (its GET reads the workflow's result), and the oldest written turns go beyond `max`.
 */
export class LatestStates {
  private readonly states = new Map<string, TurnSnapshot>();

  constructor(private readonly max = maxKeptStates) {}

  put(turnId: string, snapshot: TurnSnapshot): void {
    const kept = this.states.get(turnId);
    if (!supersedes(snapshot, kept)) return;
    this.states.delete(turnId);
    if (terminalStatuses.has(snapshot.state.status)) return;
    this.states.set(turnId, snapshot);
    if (this.states.size > this.max) this.states.delete(this.states.keys().next().value as string);
  }

  get(turnId: string): TurnSnapshot | undefined {
    return this.states.get(turnId);
  }

  forget(turnId: string): void {
    this.states.delete(turnId);
  }

  clear(): void {
    this.states.clear();
  }
}
