import type { temporal } from '@temporalio/proto';
import type { JsonPayload } from '../../lib/codec/decode';

const toBase64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');

/** A history payload as the Temporal UI sends it to a codec: protobuf JSON, bytes as base64. */
export function jsonPayload(payload: temporal.api.common.v1.IPayload): JsonPayload {
  const metadata = Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([name, value]) => [name, toBase64(value)]),
  );
  return { metadata, data: toBase64(payload.data) };
}

/** Every payload of a history, in event order. */
export function payloadsIn(
  value: unknown,
  found: temporal.api.common.v1.IPayload[] = [],
): temporal.api.common.v1.IPayload[] {
  if (Array.isArray(value)) for (const item of value) payloadsIn(item, found);
  else if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const object = value as Record<string, unknown>;
    if (object.data instanceof Uint8Array && object.metadata && typeof object.metadata === 'object')
      found.push(object as temporal.api.common.v1.IPayload);
    else for (const child of Object.values(object)) payloadsIn(child, found);
  }
  return found;
}

/** The callModel inputs of a history, in order, as the UI sends them. */
export function modelCallInputs(events: temporal.api.history.v1.IHistoryEvent[] | null | undefined): JsonPayload[] {
  return (events ?? [])
    .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
    .map((event) => jsonPayload(event.activityTaskScheduledEventAttributes!.input!.payloads![0]));
}

export const valueOfPayload = <T>(payload: JsonPayload): T =>
  JSON.parse(Buffer.from(payload.data!, 'base64').toString('utf8')) as T;
