import type { Static } from '@sinclair/typebox';
import type {
  CheckpointAccepted,
  SessionPage,
  SessionView,
  SkillCatalogPage,
  SkillDetail,
  StartedTurn,
  StreamToken as StreamTokenSchema,
  StreamTokenScope,
  TurnListQuery,
  TurnPage,
  TurnSummary,
  TurnView,
  WsRequestId,
  WsServerFrame,
} from '../../core/protocol';
import type { CheckpointAction, CheckpointAnswer, PendingCheckpoint } from '../../core/checkpoints';
import type { TurnEventBody } from '../../core/events';
import type { MessageResetEvent } from '../../core/schemas/events';
import type { TurnError, TurnRequest, TurnStatus } from '../../core/turn';

/** The API's shapes for TypeScript clients: taken from the same schemas and core types the API validates with. */
export type {
  CheckpointAction,
  CheckpointAnswer,
  PendingCheckpoint,
  TurnError,
  TurnEventBody,
  TurnRequest,
  TurnStatus,
  StreamTokenScope,
  WsRequestId,
};
export type Turn = TurnView;
export type TurnListItem = TurnSummary;
export type TurnFilter = TurnListQuery;
export type TurnList = Static<typeof TurnPage>;
export type Session = Static<typeof SessionView>;
export type SessionList = Static<typeof SessionPage>;
export type StartedTurnReply = Static<typeof StartedTurn>;
export type AnswerAccepted = CheckpointAccepted;
export type SkillList = Static<typeof SkillCatalogPage>;
export type Skill = Static<typeof SkillDetail>;
export type StreamToken = Static<typeof StreamTokenSchema>;

/** An event as the stream delivers it: durable ones with `offset` and `at` (terminal ones maybe `synthesized`), live
 * deltas with the model call and attempt, and `message.reset`. */
export type StreamEvent = (TurnEventBody & { offset?: number; at?: string; synthesized?: true }) | MessageResetEvent;
/** An event of the turn's durable log. */
export type LoggedEvent = TurnEventBody & { offset: number; at: string };
/** A frame the server sends on a turn's WebSocket. */
export type TurnSocketFrame = WsServerFrame<StreamEvent>;
