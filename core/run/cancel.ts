import { cancelledCallResult } from '../events';
import type { ToolAnswer } from './commands';

/**
 * The answer of a tool call a cancel cut while the run carried it out (a skill run, a checkpoint, an activity): its
 * `tool.end` is a cancelled error, so every `tool.start` in a run's log has its end.
 */
export const cutCallAnswer: ToolAnswer = {
  content: JSON.stringify(cancelledCallResult),
  isError: true,
  result: cancelledCallResult,
};
