import type { FastifyInstance } from 'fastify';
import type { PendingCheckpoint } from '../../core/checkpoints';
import { authHeaders, eventually } from './api';
import type { Json } from './stream-clients';

/** Drives the API like a client: sessions, turns, checkpoint answers. */
export class ApiDriver {
  constructor(readonly app: FastifyInstance) {}

  async createSession(key?: string): Promise<string> {
    const response = await this.app.inject({ method: 'POST', url: '/v1/sessions', headers: authHeaders(key) });
    if (response.statusCode !== 201) throw new Error(`create session: ${response.statusCode} ${response.body}`);
    return response.json().id;
  }

  async sendMessage(sessionId: string, body: Record<string, unknown>, key?: string) {
    const response = await this.app.inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/turns`,
      headers: authHeaders(key),
      payload: body,
    });
    return { code: response.statusCode, body: response.json() };
  }

  async startTurn(message: string, extra: Record<string, unknown> = {}, key?: string): Promise<string> {
    const sessionId = await this.createSession(key);
    const started = await this.sendMessage(sessionId, { message, ...extra }, key);
    if (started.code !== 202) throw new Error(`start turn: ${started.code} ${JSON.stringify(started.body)}`);
    return started.body.id;
  }

  async turn(id: string, key?: string) {
    const response = await this.app.inject({ method: 'GET', url: `/v1/turns/${id}`, headers: authHeaders(key) });
    return { code: response.statusCode, body: response.json() };
  }

  async waitFor(id: string, done: (turn: Json) => boolean, timeoutMs?: number, key?: string) {
    return (
      await eventually(
        () => this.turn(id, key),
        (view) => view.code === 200 && done(view.body),
        timeoutMs,
      )
    ).body;
  }

  /** Waits until the turn waits at a checkpoint other than `after`, and returns that checkpoint. */
  async pending(id: string, after?: string) {
    const turn = await this.waitFor(
      id,
      (t) => t.status === 'waiting' && t.pendingCheckpoint && t.pendingCheckpoint.id !== after,
    );
    return turn.pendingCheckpoint as PendingCheckpoint;
  }

  async finished(id: string, timeoutMs?: number, key?: string) {
    return this.waitFor(id, (t) => ['completed', 'failed', 'cancelled'].includes(t.status), timeoutMs, key);
  }

  async answer(turnId: string, checkpointId: string, body: Record<string, unknown>, key?: string) {
    const response = await this.app.inject({
      method: 'POST',
      url: `/v1/turns/${turnId}/checkpoints/${checkpointId}`,
      headers: authHeaders(key),
      payload: body,
    });
    return { code: response.statusCode, body: response.json() };
  }
}
