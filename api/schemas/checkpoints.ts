import { Type, type Static } from '@sinclair/typebox';
import { checkpointActions } from '../../core/checkpoints';
import { TurnId } from './common';

export const CheckpointId = Type.String({ pattern: '^cp-[0-9]{1,9}$' });

export const CheckpointParams = Type.Object({ id: TurnId, checkpointId: CheckpointId });

export const CheckpointAnswer = Type.Object(
  {
    action: Type.Union(checkpointActions.map((action) => Type.Literal(action))),
    overrides: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'modify: new values for the checkpoint\'s params' })),
    choice: Type.Optional(Type.String({ description: 'choose: one of the options, exactly as offered' })),
    answer: Type.Optional(Type.String({ description: 'answer: free text' })),
  },
  { additionalProperties: false },
);
export type CheckpointAnswer = Static<typeof CheckpointAnswer>;

export const CheckpointAccepted = Type.Object({ checkpointId: Type.String(), action: Type.String(), by: Type.String() });
export type CheckpointAccepted = Static<typeof CheckpointAccepted>;
