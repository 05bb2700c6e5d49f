import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import { basePrompt } from '../core/prompts';
import type { TextBlock } from '../core/messages';
import type { TurnError, TurnInput, TurnResult } from '../core/turn';
import { checkpointToolDefinition } from '../core/checkpoints';
import { noGuard, runAgentLoop } from './agent-loop';
import { CheckpointDesk } from './checkpoint-desk';
import type { TurnTool } from './tool-types';
import { TurnRun } from './turn-run';

/** One chat turn: the agent loop over a fresh message list built from the session's earlier text and the new message. */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const run = new TurnRun(input);
  try {
    const system: TextBlock[] = [{ type: 'text', text: basePrompt }];
    const desk = new CheckpointDesk(run, {
      policyFor: () => ({ ttlMs: input.settings.checkpointTtlMs, onTimeout: input.settings.checkpointOnTimeout }),
    });
    const tools = new Map<string, TurnTool>([[checkpointToolDefinition.name, desk.tool()]]);
    return await runAgentLoop({ run, system, tools, guard: noGuard });
  } catch (err) {
    if (isCancellation(err)) {
      return await CancellationScope.nonCancellable(async () => run.finish({ status: 'cancelled', reason: 'cancelled' }));
    }
    return run.finish({ status: 'failed', reason: 'model_error', error: describeFailure(err) });
  }
}

function describeFailure(err: unknown): TurnError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'ApplicationFailure', message: cause.message };
  if (err instanceof Error) return { code: err.name, message: err.message };
  return { code: 'unknown', message: String(err) };
}
