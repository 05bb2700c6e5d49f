import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import { NativeConnection, Worker, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../lib/tracing';
import type { LiveEvent } from '../lib/live';
import type { TurnSnapshot } from '../core/turn-snapshot';
import type { TurnSinks } from '../workflows/sinks';
import { createActivities, type ActivityDeps } from '../activities';
import { heartbeatThrottleMs } from '../activities/model';
import { withWorkflowCodeTarget } from './bundle-target';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A pre-built bundle (tests bundle once); otherwise the workflows folder is bundled at start-up. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Where the turn's live events go (the live channel); absent drops them. */
  publishLive?: (turnId: string, event: LiveEvent) => void;
  /** Where the turn's latest state goes (the live channel's `publishState`); absent drops it. */
  publishState?: (turnId: string, snapshot: TurnSnapshot) => void;
  /** OpenTelemetry tracing (lib/tracing.ts): spans for workflows and activities, continuing the API's trace. */
  tracing?: Tracing;
  /** Extra worker options, e.g. a smaller cache in tests. */
  overrides?: Partial<WorkerOptions>;
}

/**
 * The live sinks. They run once the activation is done, so `state` is the turn's state as the activation left it; its
 * snapshot names the run (a reset turn's new run writes its log from the reset point again, core/turn-snapshot.ts).
 * `logAppended` serves workflow code of older bundles and histories.
 */
function liveSinks({ publishLive: publish, publishState }: CreateWorkerOptions): InjectedSinks<TurnSinks> {
  const latestState = onceAfterSinkCalls(publishState);
  return {
    live: {
      logAppended: {
        fn: (_info, turnId, offset) => publish?.(turnId, { type: 'log.appended', offset }),
        callDuringReplay: false,
      },
      eventLogged: {
        fn: (info, turnId, event, state) => {
          publish?.(turnId, { type: 'log.event', event });
          latestState(turnId, { offset: event.offset, runId: info.runId, state });
        },
        callDuringReplay: false,
      },
    },
  };
}

/**
 * Every `eventLogged` call of one activation carries the same state: publishes it once, with the activation's last
 * event's offset. The worker makes all of an activation's sink calls in one synchronous pass, so a microtask runs after
 * the last of them and before any workflow code can change the state again.
 */
function onceAfterSinkCalls(
  publishState: CreateWorkerOptions['publishState'],
): (turnId: string, snapshot: TurnSnapshot) => void {
  const held = new Map<string, TurnSnapshot>();
  return (turnId, snapshot) => {
    if (!publishState) return;
    const first = !held.has(turnId);
    held.set(turnId, snapshot);
    if (!first) return;
    queueMicrotask(() => {
      const latest = held.get(turnId);
      held.delete(turnId);
      if (latest) publishState(turnId, latest);
    });
  };
}

export const workflowsPath = require.resolve('../workflows');

/**
 * Workflow interceptor modules, bundled with the workflows: the request id on a turn's log lines, and with tracing
 * the SDK's OpenTelemetry interceptors. A pre-built bundle must have been made with the same list.
 */
export function workflowInterceptorModules(tracing: boolean): string[] {
  const modules = [require.resolve('../workflows/log-attributes')];
  if (tracing) modules.push(require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'));
  return modules;
}

export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const { tracing } = options;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities(options.deps),
    sinks: {
      ...liveSinks(options),
      ...(tracing ? { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) } : {}),
    },
    interceptors: {
      ...(options.workflowBundle ? {} : { workflowModules: workflowInterceptorModules(tracing !== undefined) }),
      ...(tracing
        ? {
            activity: [
              (ctx) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ],
          }
        : {}),
    },
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath, bundlerOptions: { webpackConfigHook: withWorkflowCodeTarget } }),
    // Heartbeats carry cancellation to a streaming model call: send them often enough that a cancel lands in seconds.
    maxHeartbeatThrottleInterval: heartbeatThrottleMs,
    ...options.overrides,
  });
}
