import { upsertSearchAttributes } from '@temporalio/workflow';
import type { CheckpointDecision } from '../core/checkpoints';
import type { TurnEventBody } from '../core/events';
import { EventLog } from '../core/event-log';
import type { ChatMessage } from '../core/messages';
import { addUsage, zeroUsage, type Usage } from '../core/model';
import { carryOf, migratePlanCarry, newPolicyState, positionOf, reducePolicy, type PlanCarry, type PolicyEvent, type PolicyState, type Verdict } from '../core/policy';
import { emptySkillTurnState, type SkillTurnState } from '../core/skills';
import { terminalStatuses, type TurnEnding, type TurnInput, type TurnResult, type TurnState, type TurnStatus } from '../core/turn';
import { searchAttributes } from './search-attributes';
import { liveSink } from './sinks';

/** A turn's live state: its messages, its event log, its status, its policy and the skills it has pinned. */
export class TurnRun {
  readonly log = new EventLog(() => new Date().toISOString());
  readonly state: TurnState;
  messages: ChatMessage[];
  /** The turn's policy (core/policy): changed only by `decide`. */
  policy: PolicyState = newPolicyState();
  private policyStarted = false;
  /** The skills loaded in this turn, pinned: load_skill, load_subskill and read_file serve these. */
  pinned: SkillTurnState = emptySkillTurnState();
  /** The human's decision on the open checkpoint, set by the signal or update handler and taken by askHuman. */
  decision: CheckpointDecision | undefined;
  private ending: TurnEnding | undefined;
  /** Characters per token, calibrated with the usage each response reports. */
  charsPerToken = 3.5;
  /** How much of the conversation the worker already holds (see core/transcript.ts). */
  synced: { count: number; digest: string } | undefined;

  constructor(readonly input: TurnInput) {
    this.state = {
      turnId: input.turnId,
      sessionId: input.sessionId,
      userId: input.userId,
      status: 'running',
      usage: zeroUsage(),
      modelCalls: 0,
      pendingCheckpoint: null,
      skill: null,
      step: null,
      remaining: [],
      createdAt: input.createdAt,
      updatedAt: new Date().toISOString(),
    };
    this.messages = initialMessages(input);
    this.emit({ type: 'status', status: 'running' });
  }

  get settings() {
    return this.input.settings;
  }

  /** Applies a policy event: the policy's new state is kept, its position published, and its verdict returned. */
  decide(event: PolicyEvent): Verdict {
    const { state, verdict } = reducePolicy(this.policy, event);
    this.policy = state;
    this.policyStarted = true;
    this.publishPosition();
    return verdict;
  }

  /** What the policy would say to an event, without applying it (update validators). */
  preview(event: PolicyEvent): Verdict {
    return reducePolicy(this.policy, event).verdict;
  }

  /** What the session keeps for the next turn (what it was given, if the policy never started). */
  carry(): PlanCarry | undefined {
    return this.policyStarted ? carryOf(this.policy, this.pinned.loaded) : migratePlanCarry(this.input.resume);
  }

  emit(event: TurnEventBody): void {
    const { offset } = this.log.append(event);
    this.state.updatedAt = new Date().toISOString();
    liveSink.logAppended(this.input.turnId, offset);
  }

  setStatus(status: TurnStatus, reason?: string): void {
    if (this.state.status === status && this.state.reason === reason) return;
    this.state.status = status;
    this.state.reason = reason;
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
    this.emit({ type: 'status', status, ...(reason ? { reason } : {}) });
  }

  addUsage(usage: Usage): void {
    this.state.usage = addUsage(this.state.usage, usage);
  }

  /**
   * Decides the ending and returns the result; nothing is visible yet. The turn tells its session first and then
   * publishes, so a client that sees the turn end can send the next message at once.
   */
  finish(ending: TurnEnding): TurnResult {
    this.ending ??= ending;
    return { turnId: this.input.turnId, usage: this.state.usage, ...this.ending };
  }

  /** Makes the ending visible: final status, output, and the single terminal event. */
  publishEnding(): void {
    const ending = this.ending;
    if (!ending || terminalStatuses.has(this.state.status)) return;
    this.state.output = ending.output;
    this.state.error = ending.error;
    this.setStatus(ending.status, ending.reason);
    if (ending.status === 'completed') this.emit({ type: 'done', output: ending.output ?? '' });
    else if (ending.status === 'cancelled') this.emit({ type: 'cancelled', reason: ending.reason ?? 'cancelled' });
    else this.emit({ type: 'error', code: ending.error?.code ?? 'failed', message: ending.error?.message ?? 'The turn failed.' });
  }

  /** The plan's position, everywhere an operator or client looks: turn state, step events, search attributes. */
  private publishPosition(): void {
    const { skill, step, remaining } = positionOf(this.policy);
    const state = this.state;
    if (state.skill === skill && state.step === step && state.remaining.join() === remaining.join()) return;
    state.skill = skill;
    state.step = step;
    state.remaining = remaining;
    upsertSearchAttributes([
      { key: searchAttributes.skill, value: skill },
      { key: searchAttributes.step, value: step },
    ]);
    if (skill) this.emit({ type: 'step', skill, step, remaining });
  }
}

/** Earlier exchanges as plain text (never their tool traces), then the new message. */
export function initialMessages(input: TurnInput): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const exchange of input.history) {
    messages.push({ role: 'user', content: exchange.user }, { role: 'assistant', content: exchange.assistant || '(no answer)' });
  }
  messages.push({ role: 'user', content: input.message });
  return messages;
}
