import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  CancelFrame,
  CheckpointAnswer,
  CheckpointFrame,
  type WsRequestId,
  type WsServerFrame,
} from '../../core/protocol';
import { HttpError } from '../errors';
import type { StreamItem } from './follow-turn';

/** The WebSocket protocol of GET /v1/turns/:id/ws (docs/api.md), one JSON object per text frame. */

export type RequestId = WsRequestId;

export type ClientFrame =
  | { type: 'checkpoint'; requestId: RequestId; checkpointId: string; answer: CheckpointAnswer }
  | { type: 'cancel'; requestId: RequestId };

export type ServerFrame = WsServerFrame<StreamItem>;

const checkpointFrame = TypeCompiler.Compile(CheckpointFrame);
const checkpointAnswer = TypeCompiler.Compile(CheckpointAnswer);
const cancelFrame = TypeCompiler.Compile(CancelFrame);

/** The frame, or an HttpError (400) carrying the requestId when the frame had one. */
export function parseClientFrame(data: string): ClientFrame | { invalid: HttpError; requestId?: RequestId } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { invalid: new HttpError(400, 'invalid_request', 'A frame must be one JSON object.') };
  }
  const frame = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  const requestId =
    typeof frame.requestId === 'string' || typeof frame.requestId === 'number' ? frame.requestId : undefined;
  const invalid = (message: string) => ({ invalid: new HttpError(400, 'invalid_request', message), requestId });
  switch (frame.type) {
    case 'checkpoint': {
      if (!checkpointFrame.Check(frame)) return invalid(firstError('', checkpointFrame.Errors(frame)));
      const { type: _type, requestId: _requestId, checkpointId, ...answer } = frame;
      if (!checkpointAnswer.Check(answer)) return invalid(firstError('answer', checkpointAnswer.Errors(answer)));
      return { type: 'checkpoint', requestId: requestId!, checkpointId: checkpointId as string, answer };
    }
    case 'cancel':
      if (!cancelFrame.Check(frame)) return invalid(firstError('', cancelFrame.Errors(frame)));
      return { type: 'cancel', requestId: requestId! };
    default:
      return invalid('type must be "checkpoint" or "cancel".');
  }
}

function firstError(prefix: string, errors: Iterable<{ path: string; message: string }>): string {
  for (const error of errors)
    return `${prefix}${error.path || (prefix ? '' : '/')} ${error.message.toLowerCase()}`.trim();
  return 'The frame is not valid.';
}
