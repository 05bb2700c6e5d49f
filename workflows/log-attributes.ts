import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { TurnInput } from '../core/turn';

/**
 * Workflow interceptors (registered with the worker's `interceptors.workflowModules`, not a workflow): every log line
 * of a turn carries `requestId`, the id of the API request that started it, so one search finds the request's API
 * log and the turn's worker log together.
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  let requestId: string | undefined;
  return {
    inbound: [
      {
        async execute(input, next) {
          requestId = (input.args[0] as Partial<TurnInput> | undefined)?.requestId;
          return next(input);
        },
      },
    ],
    outbound: [
      {
        getLogAttributes(input, next) {
          return next(requestId ? { ...input, requestId } : input);
        },
      },
    ],
  };
};
