import { onCheckpointDelegated, onCheckpointExpired, onCheckpointResolved } from './checkpoint-rules';
import { onFinalProposed, onRoundStarting } from './rounds';
import { onTokensReserved } from './spending';
import { onToolFinished, onToolRequested } from './tools';
import { onToolsDetailed, onTurnStarted } from './turn-start';
import type { PolicyEvent, PolicyState, Reduction } from './types';

/**
 * The turn's policy in one pure function: the state so far and what just happened in, the new state and a verdict
 * out (allow, refuse with a message for the model, or end the turn). Plain JSON both ways, no clock of its own: every
 * event that needs the time carries it.
 */
export function reducePolicy(state: PolicyState, event: PolicyEvent): Reduction {
  switch (event.type) {
    case 'turn.started':
      return onTurnStarted(event);
    case 'round.starting':
      return onRoundStarting(state, event.at, event.tokens, event.estimate);
    case 'tokens.reserved':
      return onTokensReserved(state, event.reservation);
    case 'tools.detailed':
      return onToolsDetailed(state, event.specs);
    case 'tool.requested':
      return onToolRequested(state, event.call, event.at, event.tokens);
    case 'tool.finished':
      return onToolFinished(state, event.call, event.outcome, event.at);
    case 'checkpoint.resolved':
      return onCheckpointResolved(state, event.decision, event.at);
    case 'checkpoint.expired':
      return onCheckpointExpired(state, event.at);
    case 'checkpoint.delegated':
      return onCheckpointDelegated(state, event.checkpoint, event.checkpointCount);
    case 'final.proposed':
      return onFinalProposed(state, event.text ?? '');
  }
}
