import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Config } from './config';

/**
 * OpenTelemetry tracing for one process: a tracer provider registered globally (with an async-local context, so a
 * span started for a request is the parent of what the request does), and what the Temporal interceptors need.
 * Traces follow a turn from the API request through the session and turn workflows to the model call.
 */
export interface Tracing {
  tracer: Tracer;
  processor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

/** Batches spans to the exporter; `immediate` exports each span as it ends (tests with an in-memory exporter). */
export function startTracing(service: string, exporter: SpanExporter, options: { immediate?: boolean } = {}): Tracing {
  const resource = new Resource({ 'service.name': service });
  const processor = options.immediate ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  return {
    tracer: trace.getTracer('skillflow'),
    processor,
    resource,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** Tracing to the OTLP/HTTP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT (a collector, Jaeger, Tempo...), or none. */
export function tracingFromConfig(config: Pick<Config, 'otlpEndpoint'>, service: string): Tracing | undefined {
  if (!config.otlpEndpoint) return undefined;
  return startTracing(
    process.env.OTEL_SERVICE_NAME ?? service,
    new OTLPTraceExporter({ url: `${config.otlpEndpoint}/v1/traces` }),
  );
}
