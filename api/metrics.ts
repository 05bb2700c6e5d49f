import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The API's own metrics in Prometheus' text format, served on a port of their own (SKILLFLOW_API_METRICS_PORT) so the
 * public port never exposes them: requests by method, route pattern and status, their durations, and open streams.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'skillflow_api_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: 'skillflow_api_request_duration_seconds',
    help: 'Time to answer an HTTP request (event streams: until they end), by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'skillflow_api_' });
  }

  /** Counts every request the app answers; `openStreams` reports the SSE and WebSocket streams open right now. */
  install(app: FastifyInstance, openStreams: () => number): void {
    new Gauge({
      name: 'skillflow_api_open_streams',
      help: 'SSE and WebSocket streams open now',
      registers: [this.registry],
      collect() {
        this.set(openStreams());
      },
    });
    app.addHook('onResponse', async (request, reply) => {
      // The route's pattern, never the raw URL: ids would make every request a series of its own.
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      };
      this.requests.inc(labels);
      this.durations.observe(labels, reply.elapsedTime / 1000);
    });
  }
}

/** Serves `GET /metrics` from the registry on its own port; resolves once listening. */
export async function serveMetrics(registry: Registry, port: number, host: string): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Metrics are at GET /metrics.\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`Metrics failed: ${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
