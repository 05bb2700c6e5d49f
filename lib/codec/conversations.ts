import type { ChatMessage } from '../../core/messages';
import type { ConversationKey, KnownConversations } from '../store/turn-entries';

type Held = ConversationKey & { messages: ChatMessage[] };

/**
 * Conversations the codec rebuilt lately, a few per turn, so decoding a turn's calls one after another reads each
 * call's record once instead of walking back to the turn's first call every time. Only a starting point: the
 * rebuilt conversation is still checked against the wanted digest (lib/store/turn-entries.ts).
 */
export class RecentConversations {
  private readonly turns = new Map<string, Held[]>();

  constructor(
    private readonly maxTurns = 50,
    private readonly perTurn = 8,
  ) {}

  /** The turn's conversations held here, by key: where a walk back through the turn's records can stop. */
  of(turnId: string): KnownConversations {
    const held = this.turns.get(turnId) ?? [];
    return (key) => held.find((entry) => entry.count === key.count && entry.digest === key.digest)?.messages;
  }

  keep(turnId: string, key: ConversationKey, messages: ChatMessage[]): void {
    const held = (this.turns.get(turnId) ?? []).filter(
      (entry) => entry.count !== key.count || entry.digest !== key.digest,
    );
    held.push({ ...key, messages });
    this.turns.delete(turnId);
    this.turns.set(turnId, held.slice(-this.perTurn));
    while (this.turns.size > this.maxTurns) this.turns.delete(this.turns.keys().next().value as string);
  }
}
