import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import { MessageResetEvent, turnEventSchemas } from '../schemas/events';
import { Timestamp } from '../schemas/common';

/**
 * The events a stream carries, one OpenAPI component per type, built from core's event schemas: durable events with
 * their `offset` and `at`, terminal ones possibly `synthesized` (docs/api.md), live ones (deltas, `message.reset`)
 * without an offset. `TurnEvent` is their union, discriminated by `type`.
 */
const durable = {
  offset: Type.Integer({ minimum: 1, description: "Position in the turn's durable log" }),
  at: Timestamp,
};
const terminal = {
  synthesized: Type.Optional(
    Type.Literal(true, { description: 'Made up by the API for a turn Temporal closed without one' }),
  ),
};
const liveOnly = new Set(['message.delta', 'thinking.delta']);
const terminalTypes = new Set(['done', 'error', 'cancelled']);

/** `checkpoint.requested` -> `CheckpointRequestedEvent` */
const componentName = (type: string) =>
  `${type.replace(/(^|[._])([a-z])/g, (_m, _s, c: string) => c.toUpperCase())}Event`;

const component = (type: string, schema: TObject<TProperties>) => {
  const extra = liveOnly.has(type) ? {} : { ...durable, ...(terminalTypes.has(type) ? terminal : {}) };
  return Type.Object({ ...schema.properties, ...extra }, { $id: componentName(type), description: schema.description });
};

export const eventComponents = [
  ...Object.entries(turnEventSchemas).map(([type, schema]) => component(type, schema as TObject<TProperties>)),
  component('message.reset', MessageResetEvent),
];

export const TurnEvent = Type.Union(
  eventComponents.map((schema) => Type.Ref(schema.$id!)),
  {
    $id: 'TurnEvent',
    description: 'One event of a turn (docs/events.md), discriminated by type',
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        eventComponents.map((schema) => [
          (schema.properties as { type: { const: string } }).type.const,
          `#/components/schemas/${schema.$id}`,
        ]),
      ),
    },
  },
);

export const TurnLogQuery = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'Only events after this offset' })),
});

export const TurnLog = Type.Object({ events: Type.Array(Type.Ref('TurnEvent')) });
