import http from 'node:http';
import type { NativeConnection, Worker } from '@temporalio/worker';

export interface WorkerProbe {
  worker: Pick<Worker, 'getState'>;
  connection: Pick<NativeConnection, 'workflowService' | 'withDeadline'>;
}

const temporalDeadlineMs = 2_000;

/**
 * The worker's health endpoints, for orchestrators and load balancers: `/healthz` answers 200 while the worker has
 * not failed or stopped; `/readyz` answers 200 only while it polls its task queue and Temporal answers, else 503 with
 * the reason.
 */
export async function serveWorkerHealth(probe: WorkerProbe, port: number, host: string): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const reply = (status: number, body: Record<string, unknown>) =>
      response
        .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(body));
    const path = request.url?.split('?')[0];
    const state = probe.worker.getState();
    if (request.method !== 'GET' || (path !== '/healthz' && path !== '/readyz'))
      return reply(404, { error: 'GET /healthz or /readyz' });
    if (path === '/healthz') {
      const alive = state !== 'FAILED' && state !== 'STOPPED';
      return reply(alive ? 200 : 503, { status: alive ? 'ok' : 'down', worker: state });
    }
    if (state !== 'RUNNING')
      return reply(503, { status: 'not_ready', worker: state, reason: 'the worker is not polling' });
    probe.connection
      .withDeadline(Date.now() + temporalDeadlineMs, () => probe.connection.workflowService.getSystemInfo({}))
      .then(
        () => reply(200, { status: 'ready', worker: state, temporal: 'ok' }),
        () =>
          reply(503, {
            status: 'not_ready',
            worker: state,
            temporal: 'unreachable',
            reason: 'Temporal does not answer',
          }),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
