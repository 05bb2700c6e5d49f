import { isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { ToolCall } from './core/policy';
import { idempotencyKeyOf, type ToolHeader, type ToolRunInput, type ToolSpec } from './core/tools';
import { publicError } from './internal-errors';
import { toolError, type ToolAnswer, type TurnTool } from './tool-types';

/** Options of a registered tool whose spec carries none (never the case for the registry's own specs). */
const fallbackActivity = { timeoutMs: 30_000, heartbeatMs: null, maxAttempts: 1, retryInitialMs: 1_000 };

/**
 * The registered tools of a turn (the worker's catalog as the turn read it when it started). Each call runs in the
 * runTool activity with the tool's own timeout, retries and heartbeat; whether it may run, with which input, the
 * policy has decided before. A non-idempotent tool gets an idempotency key from the workflow id and the call id,
 * the same for every attempt.
 */
export function registeredTools(specs: Array<ToolSpec | ToolHeader>): TurnTool[] {
  return specs.map((spec) => ({ spec, run: (call: ToolCall) => runRegisteredTool(spec, call) }));
}

async function runRegisteredTool(spec: ToolSpec | ToolHeader, call: ToolCall): Promise<ToolAnswer> {
  const options = spec.activity ?? fallbackActivity;
  const { runTool } = proxyActivities<Activities>({
    startToCloseTimeout: options.timeoutMs,
    ...(options.heartbeatMs ? { heartbeatTimeout: options.heartbeatMs } : {}),
    retry: { maximumAttempts: options.maxAttempts, initialInterval: options.retryInitialMs, backoffCoefficient: 2 },
  });
  const input: ToolRunInput = {
    name: spec.name,
    input: call.input as Record<string, unknown>,
    callId: call.id,
    ...(spec.idempotent ? {} : { idempotencyKey: idempotencyKeyOf(workflowInfo().workflowId, call.id) }),
  };
  try {
    const result = await runTool.executeWithOptions({ summary: `tool ${spec.name}` }, [input]);
    return { content: result.content, isError: result.isError };
  } catch (err) {
    if (isCancellation(err)) throw err;
    return toolError(`${spec.name} failed: ${publicError(err, `Tool ${spec.name}`).message}`);
  }
}
