import { liveOnlyEventTypes, type TurnEvent, type TurnEventBody } from './events';

/** The turn's durable, append-only event log; offsets start at 1 and never repeat. */
export class EventLog {
  private readonly events: TurnEvent[] = [];

  constructor(private readonly now: () => string) {}

  append(body: TurnEventBody): TurnEvent {
    if (liveOnlyEventTypes.has(body.type))
      throw new Error(`${body.type} events are live only; publish them, do not log them`);
    const event = { ...body, offset: this.events.length + 1, at: this.now() } as TurnEvent;
    this.events.push(event);
    return event;
  }

  /** The events after `offset`, at most `limit` of them (all without one). */
  after(offset: number, limit?: number): TurnEvent[] {
    const from = Math.max(0, offset);
    return this.events.slice(from, limit !== undefined && limit > 0 ? from + limit : undefined);
  }
}
