import { workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { searchAttributes } from '../../workflows/search-attributes';
import { workflowTypes } from '../../workflows/definitions';

/**
 * Test-only workflow interceptors (bundled into one test's worker, never the product's): the workflow task in which a
 * turn opens the checkpoint named `failedCheckpointName` fails after the activation, so its events have been pushed on
 * the live channel (sinks run also when an activation fails) while Temporal records none of it, and the server runs the
 * task again from history (a replayed task starts with the same history length, so a retry of the task is not taken
 * for a new one). It fails for as long as that task brings no update, so the task that finally goes through
 * carries the model's response that opens the checkpoint and the human's answer to it together: the race of a worker
 * whose task failed or timed out after the client saw the checkpoint. A signal named `releaseSignal` (the turn has no
 * handler for it) lets the task go through as an update would: the way out once Temporal refuses updates to the turn.
 */
export const failedCheckpointName = 'raced_checkpoint';
export const releaseSignal = 'test_release_failed_task';
/** Sent to a session: its workflow tasks fail from then on (also when replayed from history), until `releaseSignal`. */
export const failSessionSignal = 'test_fail_session_tasks';

export const interceptors: WorkflowInterceptorsFactory = () => {
  let before: string | undefined;
  let carriesUpdate = false;
  let sessionFailing = false;
  // A workflow task may hold several activations (a local activity resolves in one of its own): history grows only
  // between tasks, so a new history length is a new task.
  let taskHistoryLength: number | undefined;
  const checkpoint = () => workflowInfo().typedSearchAttributes.get(searchAttributes.checkpoint);
  return {
    internals: [
      {
        activate(input, next) {
          const historyLength = Number(input.activation.historyLength ?? 0);
          if (input.batchIndex === 0 && historyLength !== taskHistoryLength) {
            taskHistoryLength = historyLength;
            before = checkpoint();
            carriesUpdate = false;
          }
          carriesUpdate ||= (input.activation.jobs ?? []).some(
            (job) => job.doUpdate || job.signalWorkflow?.signalName === releaseSignal,
          );
          for (const job of input.activation.jobs ?? []) {
            if (job.signalWorkflow?.signalName === failSessionSignal) sessionFailing = true;
            if (job.signalWorkflow?.signalName === releaseSignal) sessionFailing = false;
          }
          next(input);
        },
        concludeActivation(input, next) {
          const opened = checkpoint() === failedCheckpointName && before !== failedCheckpointName;
          if (workflowInfo().workflowType === workflowTypes.turn && opened && !carriesUpdate) {
            throw new Error(
              `Test: the workflow task that opened ${failedCheckpointName} fails until it carries the answer`,
            );
          }
          if (workflowInfo().workflowType === workflowTypes.session && sessionFailing)
            throw new Error("Test: the session's workflow tasks fail until released");
          return next(input);
        },
      },
    ],
  };
};
