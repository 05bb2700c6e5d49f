import { examCheckpoints, examDecision, examMessage } from '../../test/support/exam-script';

/**
 * One exam as a person in a browser would take it, through the public API only: it starts the turn on one API
 * process, follows the turn's SSE stream on the other, answers every checkpoint after a moment's thought, and when a
 * process goes away it carries on with the other one, resuming the stream with Last-Event-ID.
 */

export interface Api {
  name: string;
  url: string;
}

export interface ExamEvent {
  type: string;
  offset?: number;
  [key: string]: unknown;
}

export interface ExamRecord {
  n: number;
  questions: number;
  sessionId?: string;
  turnId?: string;
  startedOn?: string;
  /** API of each stream connection, in order; more than one means the stream was resumed. */
  streams: string[];
  /** Connections opened with Last-Event-ID after a stream broke off. */
  resumes: number;
  /** Durable events in the order they arrived (live deltas are not kept). */
  events: ExamEvent[];
  deltas: number;
  answers: Array<{ checkpointId: string; name: string; action: string; status: number; attempts: number }>;
  terminal?: ExamEvent;
  problems: string[];
  endedAt?: number;
}

export interface ExamOptions {
  apis: Api[];
  apiKey: string;
  questions: number;
  /** How long the person takes to answer a checkpoint: a random time in this range (ms). */
  thinkMs: [number, number];
  /** Gives up on the exam after this long. */
  deadlineMs: number;
}

const retryableStatuses = new Set([429, 500, 502, 503, 504]);

export class ExamClient {
  readonly record: ExamRecord;
  private readonly deadline: number;
  private readonly answering: Array<Promise<void>> = [];
  private readonly abort = new AbortController();
  /** While set, answers wait for it after their thinking time (an operator moving waiting runs meanwhile). */
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(
    readonly n: number,
    private readonly options: ExamOptions,
  ) {
    this.record = {
      n,
      questions: options.questions,
      streams: [],
      resumes: 0,
      events: [],
      deltas: 0,
      answers: [],
      problems: [],
    };
    this.deadline = Date.now() + options.deadlineMs;
  }

  /** The API this exam prefers for `role`: turns start on one process, streams come from the other. */
  private api(role: 'start' | 'stream', attempt = 0): Api {
    const { apis } = this.options;
    return apis[(this.n + (role === 'stream' ? 1 : 0) + attempt) % apis.length];
  }

  async start(): Promise<void> {
    const session = await this.request<{ id: string }>('POST', '/v1/sessions', undefined, [201], 'start');
    const turn = await this.request<{ id: string }>(
      'POST',
      `/v1/sessions/${session.body.id}/turns`,
      { message: examMessage(this.options.questions, this.n) },
      [202],
      'start',
    );
    this.record.sessionId = session.body.id;
    this.record.turnId = turn.body.id;
    this.record.startedOn = turn.api;
  }

  /** Answers wait from now on until `releaseAnswers`, so the exam stays at its checkpoints. */
  holdAnswers(): void {
    if (this.held) return;
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  releaseAnswers(): void {
    this.release?.();
    this.held = undefined;
    this.release = undefined;
  }

  /** Whether the exam waits at a checkpoint it has not answered yet. */
  get waiting(): boolean {
    return this.record.events.filter((e) => e.type === 'checkpoint.requested').length > this.record.answers.length;
  }

  /** Follows the turn to its end; resolves with the record (problems are recorded, not thrown). */
  async follow(): Promise<ExamRecord> {
    try {
      await this.stream();
      await Promise.all(this.answering);
    } catch (err) {
      this.record.problems.push((err as Error).message);
    } finally {
      this.abort.abort();
      this.record.endedAt = Date.now();
    }
    return this.record;
  }

  private async stream(): Promise<void> {
    for (let attempt = 0; !this.record.terminal; attempt++) {
      if (Date.now() > this.deadline)
        throw new Error(`exam ${this.n}: no terminal event within ${this.options.deadlineMs / 1000} s`);
      const api = this.api('stream', attempt);
      const last = this.record.events.at(-1)?.offset;
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.options.apiKey}`,
        accept: 'text/event-stream',
      };
      if (last !== undefined) headers['last-event-id'] = String(last);
      let response: Response;
      try {
        response = await fetch(`${api.url}/v1/turns/${this.record.turnId}/events`, {
          headers,
          signal: this.abort.signal,
        });
      } catch {
        await pause(300);
        continue;
      }
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        if (!retryableStatuses.has(response.status))
          throw new Error(`exam ${this.n}: GET events on ${api.name} answered ${response.status}`);
        await pause(300);
        continue;
      }
      this.record.streams.push(api.name);
      if (last !== undefined) this.record.resumes++;
      await this.read(response.body).catch(() => undefined);
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = buffer
            .slice(0, end)
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart());
          buffer = buffer.slice(end + 2);
          if (data.length > 0) this.onEvent(JSON.parse(data.join('\n')) as ExamEvent);
          if (this.record.terminal) return;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  private onEvent(event: ExamEvent): void {
    if (event.offset === undefined) {
      this.record.deltas++;
      return;
    }
    const last = this.record.events.at(-1)?.offset ?? 0;
    if (event.offset !== last + 1)
      this.record.problems.push(`exam ${this.n}: event offset ${event.offset} after ${last} (a gap or a duplicate)`);
    if (event.offset <= last) return;
    this.record.events.push(event);
    if (event.type === 'checkpoint.requested')
      this.answering.push(this.answer(event.checkpoint as { id: string; name: string; options?: string[] | null }));
    if (event.type === 'done' || event.type === 'error' || event.type === 'cancelled') this.record.terminal = event;
  }

  private async answer(checkpoint: { id: string; name: string; options?: string[] | null }): Promise<void> {
    const [min, max] = this.options.thinkMs;
    await pause(min + Math.random() * (max - min));
    await this.held;
    const decision = examDecision(checkpoint);
    try {
      const { status, attempts } = await this.request(
        'POST',
        `/v1/turns/${this.record.turnId}/checkpoints/${checkpoint.id}`,
        decision,
        [200, 409],
        'start',
      );
      this.record.answers.push({
        checkpointId: checkpoint.id,
        name: checkpoint.name,
        action: decision.action,
        status,
        attempts,
      });
    } catch (err) {
      this.record.problems.push(`exam ${this.n}: answering ${checkpoint.name}: ${(err as Error).message}`);
    }
  }

  /** A JSON request that goes to the other API process when one does not answer, until the exam's deadline. */
  private async request<T = unknown>(
    method: string,
    path: string,
    body: unknown,
    expected: number[],
    role: 'start' | 'stream',
  ) {
    for (let attempt = 0; ; attempt++) {
      const api = this.api(role, attempt);
      try {
        const response = await fetch(`${api.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.options.apiKey}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (expected.includes(response.status))
          return {
            status: response.status,
            body: (text ? JSON.parse(text) : null) as T,
            api: api.name,
            attempts: attempt + 1,
          };
        if (!retryableStatuses.has(response.status))
          throw new Error(`${method} ${path} on ${api.name}: ${response.status} ${text.slice(0, 300)}`);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith(`${method} ${path}`)) throw err;
      }
      if (Date.now() > this.deadline)
        throw new Error(`${method} ${path}: no API process answered before the exam's deadline`);
      await pause(Math.min(2_000, 200 * (attempt + 1)));
    }
  }
}

/** The checks every finished exam must pass; the problems found. */
export function checkExam(record: ExamRecord): string[] {
  const problems = [...record.problems];
  const where = `exam ${record.n} (${record.turnId})`;
  if (record.terminal?.type !== 'done')
    problems.push(`${where} ended with ${JSON.stringify(record.terminal ?? 'no terminal event')}`);
  const requested = record.events
    .filter((event) => event.type === 'checkpoint.requested')
    .map((event) => (event.checkpoint as { name: string }).name);
  const distinct = new Set(requested);
  if (requested.length !== distinct.size)
    problems.push(`${where}: a checkpoint was asked twice (${requested.join(', ')})`);
  if (distinct.size !== examCheckpoints(record.questions))
    problems.push(`${where}: ${distinct.size} checkpoints asked, ${examCheckpoints(record.questions)} expected`);
  for (const answer of record.answers) {
    const resolved = record.events.find(
      (event) => event.type === 'checkpoint.resolved' && event.checkpointId === answer.checkpointId,
    );
    if (!resolved)
      problems.push(`${where}: the answer to ${answer.name} (HTTP ${answer.status}) never resolved its checkpoint`);
    else if (resolved.action !== answer.action)
      problems.push(`${where}: ${answer.name} resolved as ${String(resolved.action)}, answered ${answer.action}`);
  }
  if (record.answers.length !== distinct.size)
    problems.push(`${where}: ${record.answers.length} answers for ${distinct.size} checkpoints`);
  return problems;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
