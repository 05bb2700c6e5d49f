import type { Allowance, CheckpointPlan, End, Verdict } from '../policy/types';
import type { PlanSymbol } from '../skills/plan-ast';
import type { ToolAnswer } from './commands';
import { endedCallMessage } from './endings';

/**
 * The policy's verdicts as the commands workflow code carries out: each kind with exactly what its effect needs, so no
 * workflow code probes a verdict's optional fields. (Until `Verdict` itself gives way to them: docs/run-machine.md.)
 */

/** What a tool call leads to, as the policy ruled it (its verdict on `tool.requested`). */
export type CallCommand =
  /** Refused: the call is answered with this error, and the run goes on. */
  | { kind: 'refuse_call'; answer: ToolAnswer }
  /** The run ends on this call: it is answered with this error, then the run ends as `end` says. */
  | { kind: 'end_on_call'; answer: ToolAnswer; end: End }
  /** A human is asked first (request_human_approval, or a tool that needs approval). */
  | { kind: 'ask_human'; checkpoint: CheckpointPlan }
  /** Run the tool with this input; an invoke_skill hands its skill run this allowance (null: nothing to hand down). */
  | { kind: 'run_tool'; input: unknown; allowance: Allowance | null };

export function callCommand(verdict: Verdict, input: unknown): CallCommand {
  switch (verdict.kind) {
    case 'refuse':
      return { kind: 'refuse_call', answer: errorAnswer(verdict.message) };
    case 'end':
      return { kind: 'end_on_call', answer: errorAnswer(endedCallMessage(verdict.ending)), end: verdict };
    case 'allow':
      if (verdict.ask) return { kind: 'ask_human', checkpoint: verdict.ask };
      return { kind: 'run_tool', input: verdict.input ?? input, allowance: verdict.handDown ?? null };
  }
}

/** What comes before a round's model call, in order, as the policy ruled it (its verdict on `round.starting`). */
export type RoundCommand =
  /** No model call: the run ends (perhaps with a last word first). */
  | { kind: 'end'; end: End }
  /** Reserve the round's tokens in the user's day ledger first, then tell the policy (`tokens.reserved`). */
  | { kind: 'reserve_tokens'; tokens: number; left: number }
  /** Engine guidance for the model (a deadline passed). */
  | { kind: 'add_note'; text: string };

export function roundCommands(verdict: Verdict): RoundCommand[] {
  if (verdict.kind === 'end') return [{ kind: 'end', end: verdict }];
  const commands: RoundCommand[] = [];
  if (verdict.kind === 'allow' && verdict.reserve) commands.push({ kind: 'reserve_tokens', ...verdict.reserve });
  const note = noteOf(verdict);
  if (note !== null) commands.push({ kind: 'add_note', text: note });
  return commands;
}

/** The guidance an allow carries for the model (a turn's start, a step's limit), or none. */
export function noteOf(verdict: Verdict): string | null {
  return verdict.kind === 'allow' && verdict.note ? verdict.note : null;
}

const errorAnswer = (content: string): ToolAnswer => ({ content, isError: true });

/** What the plan allows next, for a freshly loaded skill's instructions (undefined: the policy says nothing). */
export function allowedNextOf(verdict: Verdict): PlanSymbol[] | undefined {
  return verdict.kind === 'allow' ? verdict.allowedNext : undefined;
}
