import { Type, type Static } from '@sinclair/typebox';
import { CheckpointAction, CheckpointAnswer } from '../schemas/checkpoints';
import { IdempotencyHeaders, TurnId } from './common';

export const CheckpointId = Type.String({ pattern: '^cp-[0-9]{1,9}$' });

export const CheckpointParams = Type.Object({ id: TurnId, checkpointId: CheckpointId });

export { CheckpointAnswer };

export const AnswerHeaders = IdempotencyHeaders('the same answer back, also once the turn went on or ended');

export const CheckpointAccepted = Type.Object({
  checkpointId: Type.String(),
  action: CheckpointAction,
  by: Type.String(),
});
export type CheckpointAccepted = Static<typeof CheckpointAccepted>;
