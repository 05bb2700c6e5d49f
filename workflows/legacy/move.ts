import { HandlerUnfinishedPolicy } from '@temporalio/common';
import { log, makeContinueAsNewFunc, patched, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { workflowTypes } from '../definitions';
import { moveToCurrentSignal } from './definitions';
import type { PendingCheckpoint } from './core/checkpoints';
import type { TurnEvent } from './core/events';
import type { ChatMessage } from './core/messages';
import type { Usage } from './core/model';
import type { PolicyState } from './core/policy';
import type { SkillRunInput } from './core/skill-runs';
import type { SkillTurnState } from './core/skills';
import type { TurnInput, TurnState } from './core/turn';
import type { TurnRun, WaitingCall } from './turn-run';

export const movePatch = 'move-to-current';
export const maxMovedBytes = 1.5 * 1024 * 1024;

/** Version 1 of the `moved` start input, as /work/contracts/moved-input.md has it; core/boundary/moved.ts reads it. */
export interface MovedRun {
  version: 1;
  kind: 'turn' | 'skill';
  from: { workflowType: string; runId: string };
  input: TurnInput | SkillRunInput;
  messages: ChatMessage[];
  events: TurnEvent[];
  state: TurnState;
  ownUsage: Usage;
  policy: PolicyState;
  pinned: SkillTurnState;
  charsPerToken: number;
  children: Array<{ workflowId: string; seq: number; usage: Usage }>;
  structuredOutput: { value: unknown } | null;
  relaySeq: number;
  waiting: WaitingCall & { checkpoint: PendingCheckpoint };
}

export type MoveSource =
  { kind: 'turn'; input: TurnInput } | { kind: 'skill'; input: SkillRunInput; relaySeq: () => number | undefined };

/**
 * Not registered yet: the current code's turn and skill run do not restore a `{ moved }` start, so a run moved now would
 * be stranded (its first workflow task failing for ever). Once they do, turn.ts registers it after its handlers with
 * `handleMoveToCurrent(run, { kind: 'turn', input })`, skill-workflow.ts after its relay with
 * `handleMoveToCurrent(run, { kind: 'skill', input, relaySeq: () => relay.settledSeq() })`.
 */
export function handleMoveToCurrent(run: TurnRun, source: MoveSource): void {
  // Frozen code takes this handler safely: it issues no command until a moveToCurrent signal arrives, which no history
  // of a run in flight holds, so those replay unchanged; `patched` turns a signal that a pre-boundary worker received
  // (and ignored, having no handler) into nothing when this code replays it, since that history has no marker there;
  // the timer lets an answer that arrived with the signal be taken first (then the run is no longer movable).
  setHandler(
    moveToCurrentSignal,
    async ({ by }) => {
      if (!patched(movePatch)) return;
      await sleep(1);
      const moved = movedRunOf(run, source);
      if (typeof moved === 'string') {
        log.info('Not moved to the current code', { reason: moved, by });
        return;
      }
      const to = source.kind === 'turn' ? workflowTypes.turn : workflowTypes.skillRun;
      log.info('Moving to the current code', { by, to, checkpoint: moved.waiting.checkpoint.id });
      await makeContinueAsNewFunc({ workflowType: to })({ moved });
    },
    { unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON },
  );
}

/** The run as a `MovedRun`, or why it cannot move now. */
export function movedRunOf(run: TurnRun, source: MoveSource): MovedRun | string {
  const { state } = run;
  const pending = state.pendingCheckpoint;
  if (state.status !== 'waiting' || !pending) return `it does not wait at a checkpoint (${state.status})`;
  if (run.mirroring) return `it shows the checkpoint of skill run ${run.mirroring}: move that one`;
  if (run.decision !== undefined) return `its checkpoint ${pending.id} is answered already`;
  const waiting = run.waitingCall;
  if (!waiting || waiting.ask.id !== pending.id) return `it waits at ${pending.id} outside a tool call it answers`;
  const relaySeq = source.kind === 'skill' ? source.relaySeq() : 0;
  if (relaySeq === undefined) return 'it is still telling its parent what it did';
  const info = workflowInfo();
  const moved: MovedRun = {
    version: 1,
    kind: source.kind,
    from: { workflowType: info.workflowType, runId: info.runId },
    input: source.input,
    messages: run.messages,
    events: run.log.after(0),
    state,
    ownUsage: run.ownUsageOf(),
    policy: run.policy,
    pinned: run.pinned,
    charsPerToken: run.charsPerToken,
    children: [...run.children].map(([workflowId, link]) => ({ workflowId, seq: link.seq, usage: link.usage })),
    structuredOutput: run.structuredOutput ?? null,
    relaySeq,
    waiting: { ...waiting, checkpoint: pending },
  };
  const bytes = new TextEncoder().encode(JSON.stringify(moved)).length;
  return bytes > maxMovedBytes ? `its state is ${bytes} bytes of JSON, over ${maxMovedBytes}` : moved;
}
