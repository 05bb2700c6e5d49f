import type { TurnSnapshot } from '../../core/turn-snapshot';
import type { LiveChannel, LiveEvent, LiveListener } from './channel';
import { LatestStates } from './latest-states';

/** Listeners of this process, by turn; also the local fan-out behind the socket and Redis channels. */
export class InProcessChannel implements LiveChannel {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private readonly states = new LatestStates();

  publish(turnId: string, event: LiveEvent): void {
    const listeners = this.listeners.get(turnId);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch {
        // One failing listener must not keep the event from the others, nor fail the publisher.
      }
    }
  }

  subscribe(turnId: string, listener: LiveListener): () => void {
    let listeners = this.listeners.get(turnId);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(turnId, listeners);
    }
    listeners.add(listener);
    return () => {
      const current = this.listeners.get(turnId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(turnId);
    };
  }

  async subscribed(): Promise<void> {
    // Local: a listener is in place as soon as subscribe returns.
  }

  /** Keeps a copy: a publisher in this process (a worker's sink) may go on changing the object it published. */
  publishState(turnId: string, snapshot: TurnSnapshot): void {
    this.states.put(turnId, structuredClone(snapshot));
  }

  forgetState(turnId: string): void {
    this.states.forget(turnId);
  }

  async latestState(turnId: string): Promise<TurnSnapshot | undefined> {
    return this.states.get(turnId);
  }

  hasListeners(turnId: string): boolean {
    return this.listeners.has(turnId);
  }

  /** Turns with at least one listener. */
  turns(): string[] {
    return [...this.listeners.keys()];
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.states.clear();
  }
}
