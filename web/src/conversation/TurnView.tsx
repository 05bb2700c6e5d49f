import { useEffect, useMemo, useState } from 'preact/hooks';
import { CheckpointForm } from '../forms/CheckpointForm';
import { Countdown } from '../forms/Countdown';
import { ArtifactView } from '../report/ArtifactView';
import { Markdown } from './Markdown';
import { itemsOf, pendingCheckpoint, type Item, type ToolCall } from './model';
import { countLabel, planPosition } from './position';
import { useTurn, type Connection } from './useTurn';

interface Props {
  turnId: string;
  /** The turn had ended when the page loaded it: its log is read, not followed. */
  ended: boolean;
  /** The user's message that started it. */
  message: string;
  /** Called when a turn followed live ends. */
  onEnded?: () => void;
}

/** One turn of the conversation: the user's message, then what the turn did, as its events say. */
export function TurnView({ turnId, ended: endedAtLoad, message, onEnded }: Props) {
  const [ended] = useState(endedAtLoad);
  const [state, connection] = useTurn(turnId, ended);
  useEffect(() => {
    if (!ended && connection.kind === 'ended') onEnded?.();
  }, [ended, connection.kind]);
  const items = useMemo(() => itemsOf(state), [state]);
  const position = useMemo(() => planPosition(state.events), [state.events]);
  const waiting = pendingCheckpoint(state);
  const count = countLabel(position);
  return (
    <article class="turn" data-turn={turnId} aria-label={`Turn ${turnId}`}>
      <div class="bubble user">
        <span class="who">You</span>
        <p>{message}</p>
      </div>
      {position.skill ? (
        <p class="position" aria-label="Plan position">
          <span class="skill">{position.skill}</span>
          {position.step ? <span>step {position.step.replace(/^checkpoint:/, 'checkpoint ')}</span> : null}
          {count ? <span class="count">{count}</span> : null}
          {position.remaining.length > 0 ? <span>{position.remaining.length} steps to go</span> : null}
          {position.endsAt !== null && !ended && connection.kind !== 'ended' ? (
            <Countdown until={position.endsAt} label="Time left in the exam" />
          ) : null}
        </p>
      ) : null}
      {items.map((item) => (
        <ItemView key={item.key} item={item} turnId={turnId} waitingId={waiting?.id} />
      ))}
      <ConnectionNote connection={connection} />
      <details class="event-log">
        <summary>Events ({state.events.length})</summary>
        <ol>
          {state.events.map((event) => (
            <li key={event.offset} data-event-offset={event.offset}>
              <code>{event.offset}</code> {event.type} <time dateTime={event.at}>{event.at}</time>
            </li>
          ))}
        </ol>
      </details>
    </article>
  );
}

function ItemView({ item, turnId, waitingId }: { item: Item; turnId: string; waitingId?: string }) {
  switch (item.kind) {
    case 'message':
      return (
        <div class={item.streaming ? 'bubble assistant streaming' : 'bubble assistant'} aria-busy={item.streaming}>
          <span class="who">{item.depth ? `Skill run (depth ${item.depth})` : 'Assistant'}</span>
          <Markdown text={item.text} />
        </div>
      );
    case 'tools':
      return <ToolGroup calls={item.calls} />;
    case 'checkpoint':
      if (item.checkpoint.id === waitingId)
        return <CheckpointForm key={item.checkpoint.id} turnId={turnId} checkpoint={item.checkpoint} />;
      return <AnsweredCheckpoint item={item} />;
    case 'artifact':
      return <ArtifactView name={item.name} data={item.data} id={`${turnId}-${item.key}`} />;
    case 'end':
      return <Ending event={item.event} />;
  }
}

function ToolGroup({ calls }: { calls: ToolCall[] }) {
  const names = calls.map((call) => call.name);
  const failed = calls.filter((call) => call.end?.isError).length;
  return (
    <details class="tools">
      <summary>
        {calls.length === 1 ? '1 tool call' : `${calls.length} tool calls`}: {names.join(', ')}
        {failed > 0 ? ` (${failed} failed)` : ''}
      </summary>
      <ul>
        {calls.map((call) => (
          <li key={call.callId}>
            <strong>{call.name}</strong> {call.end ? (call.end.isError ? 'failed' : 'done') : 'running…'}
            <pre>{JSON.stringify(call.args, null, 2)}</pre>
            {call.end ? <pre>{JSON.stringify(call.end.result, null, 2)}</pre> : null}
          </li>
        ))}
      </ul>
    </details>
  );
}

function resultText(result: unknown): string | null {
  if (!result || typeof result !== 'object') return null;
  const value = result as Record<string, unknown>;
  if (typeof value.answer === 'string') return `Answer: ${value.answer}`;
  if (typeof value.choice === 'string') return `Chose: ${value.choice}`;
  if (value.cancelled) return 'Cancelled';
  if (value.approved) {
    const parts = ['Approved'];
    if (value.overrides) parts.push(`with ${JSON.stringify(value.overrides)}`);
    if (typeof value.note === 'string') parts.push(`, note: “${value.note}”`);
    return parts.join(' ');
  }
  return null;
}

function AnsweredCheckpoint({ item }: { item: Extract<Item, { kind: 'checkpoint' }> }) {
  const { checkpoint, outcome } = item;
  const said = resultText(item.result);
  return (
    <div class="checkpoint answered" data-checkpoint={checkpoint.name} data-outcome={outcome.kind}>
      <p class="checkpoint-title">
        <code>{checkpoint.name}</code>{' '}
        {outcome.kind === 'resolved'
          ? `${outcome.action} by ${outcome.by}`
          : outcome.kind === 'expired'
            ? 'expired: nobody answered in time'
            : 'no longer waiting'}
      </p>
      <Markdown text={checkpoint.summary} class="summary" />
      {said ? <p class="said">{said}</p> : null}
    </div>
  );
}

function Ending({ event }: { event: Extract<Item, { kind: 'end' }>['event'] }) {
  switch (event.type) {
    case 'done':
      return (
        <p class="ending done" data-ending="done">
          The turn is complete.
        </p>
      );
    case 'error':
      return (
        <p class="ending error" role="alert" data-ending="error">
          The turn failed ({event.code}): {event.message}
        </p>
      );
    case 'cancelled':
      return (
        <p class="ending cancelled" data-ending="cancelled">
          The turn was cancelled ({event.reason}).
        </p>
      );
  }
}

function ConnectionNote({ connection }: { connection: Connection }) {
  switch (connection.kind) {
    case 'reconnecting':
      return (
        <p class="connection" role="status">
          Connection lost; reconnecting (attempt {connection.attempt})…
        </p>
      );
    case 'failed':
      return (
        <p class="connection error" role="alert">
          Cannot follow this turn: {connection.message}
        </p>
      );
    default:
      return null;
  }
}
