import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkParams, type SkillManifest } from '../../core/skills';
import { sessionWorkflowId } from '../../core/turn';
import {
  StartTurnBody,
  StartTurnHeaders,
  StartTurnQuery,
  StartedTurn,
  TurnView,
  SessionParams,
  created,
  errorResponses,
} from '../../core/protocol';
import { startTurnUpdate } from '../../workflows/definitions';
import {
  SessionErrorType,
  type StartTurnRequest,
  type StartTurnResponse,
  type TurnOrigin,
} from '../../workflows/session-types';
import type { ApiContext } from '../context';
import { startBeyondWaitMs } from '../deadlines';
import { HttpError, notFound } from '../errors';
import { idempotencyHeader, keyDigest, keyReused, newAttempt, replayedHeader, requestDigest } from '../idempotency';
import { checkedMessage, checkedParams } from '../input-limits';
import { describeVisibleSession } from '../sessions';
import { waitForTurnToSettle } from '../turn-wait';

interface StartTurnRoute {
  Params: { id: string };
  Body: StartTurnBody;
  Querystring: Static<typeof StartTurnQuery>;
  Headers: Static<typeof StartTurnHeaders>;
}
type StartTurnCall = FastifyRequest<StartTurnRoute>;

/** POST /v1/sessions/:id/turns: the session's update starts the turn; `?wait=true` waits for it to settle. */
export function startTurnRoute(app: FastifyInstance, context: ApiContext): void {
  const { config } = context;
  app.post<StartTurnRoute>(
    '/v1/sessions/:id/turns',
    {
      handlerTimeout: Math.max(config.requestTimeoutMs, config.waitTimeoutMs + startBeyondWaitMs),
      schema: {
        operationId: 'startTurn',
        summary: 'Send a message: starts a turn',
        description:
          'Answers 202 at once, or with `?wait=true` holds the request until the turn ends or waits at a checkpoint and ' +
          `answers 200 with the turn (202 after ${config.waitTimeoutMs} ms). 409 while another turn of the session runs or waits. ` +
          'With an `Idempotency-Key` header, a retry with the same key and body (by the same user) answers with the turn the first ' +
          'request started, `Idempotent-Replayed: true`, instead of starting another (also after the session continued as new); ' +
          'the same key with another body is 422 `idempotency_key_reused`.',
        tags: ['turns'],
        params: SessionParams,
        headers: StartTurnHeaders,
        querystring: StartTurnQuery,
        body: StartTurnBody,
        response: {
          200: TurnView,
          202: created(StartedTurn, 'The turn started; Location is its URL'),
          ...errorResponses(400, 401, 404, 409, 413, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const sessionId = request.params.id;
      const checked = await checkedStart(context, request);
      const origin = originOf(request);
      const started = await startInSession(context, sessionId, {
        ...request.body,
        ...checked,
        requestId: request.id,
        ...(origin ? { idempotency: origin } : {}),
      });
      if (origin && isReplay(origin, started)) void reply.header(replayedHeader, 'true');
      return answerStarted(context, request, reply, started.turnId);
    },
  );
}

/** The request's message, params and skill checked, and the caller's token budget: what the turn starts with. */
async function checkedStart(
  { client, config, quotas, skills }: ApiContext,
  request: StartTurnCall,
): Promise<Pick<StartTurnRequest, 'message' | 'params' | 'tokenBudget'>> {
  const { skill } = request.body;
  const message = checkedMessage(request.body.message, config);
  const params = request.body.params === undefined ? undefined : checkedParams(request.body.params);
  if (params !== undefined && !skill)
    throw new HttpError(400, 'invalid_request', 'params go with a skill: name the skill they are for.');
  await describeVisibleSession(client, request.caller, request.params.id);
  const tokenBudget = await quotas.checkTokenBudget(request.caller.id);
  if (skill && skills) {
    const catalog = await skills.catalog();
    const manifest = catalog.skills.find((entry) => entry.name === skill);
    if (!manifest)
      throw new HttpError(400, 'unknown_skill', `There is no enabled skill "${skill}"; GET /v1/skills lists them.`);
    if (params !== undefined) checkSkillParams(manifest, params);
  }
  return {
    message,
    ...(params !== undefined ? { params } : {}),
    ...(tokenBudget !== undefined ? { tokenBudget } : {}),
  };
}

/** With an `Idempotency-Key`: this attempt of the keyed request, which the session records with the turn it starts. */
function originOf(request: StartTurnCall): TurnOrigin | undefined {
  const key = request.headers[idempotencyHeader];
  if (key === undefined) return undefined;
  return { key: keyDigest(request.caller.id, key), requestDigest: requestDigest(request.body), attempt: newAttempt() };
}

/** Whether the session answered with the turn an earlier attempt of the key started; 422 when its body differed. */
function isReplay(origin: TurnOrigin, started: StartTurnResponse): boolean {
  if (!started.idempotency) return false;
  if (started.idempotency.requestDigest !== origin.requestDigest) throw keyReused();
  return started.idempotency.attempt !== origin.attempt;
}

async function startInSession(
  { client }: ApiContext,
  sessionId: string,
  start: StartTurnRequest,
): Promise<StartTurnResponse> {
  try {
    return await client.workflow.getHandle(sessionWorkflowId(sessionId)).executeUpdate(startTurnUpdate, {
      args: [start],
    });
  } catch (err) {
    throw mapSessionError(err, sessionId);
  }
}

/** 202 with the turn's URL, or with `?wait=true` 200 and the turn once it has settled within the wait. */
async function answerStarted(
  { client, config, closing, live }: ApiContext,
  request: StartTurnCall,
  reply: FastifyReply,
  turnId: string,
) {
  if (request.query.wait) {
    const abort = new AbortController();
    reply.raw.on('close', () => abort.abort());
    const signal = AbortSignal.any([abort.signal, closing]);
    const settled = await waitForTurnToSettle(client, request.caller, turnId, config.waitTimeoutMs, signal, live);
    if (settled) return reply.code(200).send(settled);
  }
  return reply
    .code(202)
    .header('location', `/v1/turns/${turnId}`)
    .send({ id: turnId, sessionId: request.params.id, status: 'running' });
}

/** A typed start's params against the skill's declared parameters: 400 with every problem and the expected parameters. */
function checkSkillParams(manifest: SkillManifest, params: Record<string, unknown>): void {
  const checked = checkParams(manifest, params);
  if (checked.ok) return;
  const listed = checked.problems.map((problem) => problem.message).join('; ');
  throw new HttpError(
    400,
    'invalid_params',
    `The params are not valid for skill ${manifest.name}: ${listed}.`,
    undefined,
    checked.problems,
    manifest.parameters,
  );
}

function mapSessionError(err: unknown, sessionId: string): unknown {
  if (err instanceof WorkflowNotFoundError) return notFound(`Session ${sessionId}`);
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const { type, message } = err.cause;
    if (type === SessionErrorType.turnInProgress) return new HttpError(409, 'turn_in_progress', message);
    if (type === SessionErrorType.sessionClosed) return notFound(`Session ${sessionId}`);
    if (type === 'InvalidRequest') return new HttpError(400, 'invalid_request', message);
  }
  return err;
}
