import {
  CancellationScope,
  CancelledFailure,
  condition,
  setCurrentDetails,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { LedgerScope } from '../core/budget';
import { checkpointDetails } from '../core/checkpoint-details';
import type { PendingCheckpoint } from '../core/checkpoints';
import type { TurnEventBody } from '../core/events';
import { EventLog } from '../core/event-log';
import type { ChatMessage } from '../core/messages';
import { addUsage, zeroUsage, type Usage } from '../core/model';
import {
  carryOf,
  positionOf,
  readPlanCarry,
  reducePolicy,
  type PlanCarry,
  type PolicyEvent,
  type PolicyState,
  type Verdict,
} from '../core/policy';
import { cancelRequested } from '../core/run/children';
import type { CheckpointOutcome, RunCommand, RunStep } from '../core/run/commands';
import type { Ending } from '../core/run/endings';
import { newRunState, type RunState } from '../core/run/state';
import type { Reason } from '../core/run/reasons';
import type { SkillExecution } from '../core/schemas/skill-runs';
import { emptySkillTurnState, type SkillTurnState } from '../core/skills';
import { ConversationMeasure } from '../core/transcript';
import {
  startingTurnState,
  terminalStatuses,
  type TurnInput,
  type TurnResult,
  type TurnState,
  type TurnStatus,
} from '../core/turn';
import { answerCheckpointUpdate, checkpointDecisionSignal } from './definitions';
import { searchAttributes } from './search-attributes';
import { liveSink } from './sinks';

/** Where a run sits: a turn (depth 0), or a skill run under the turn `rootTurnId`. */
export interface RunPlace {
  depth: number;
  rootTurnId: string;
}

/** The command of a run machine's step that leads on, for the code that reduced it: the call's answer, or one to pass down. */
export type Lead = Extract<RunCommand, { kind: 'reply_to_call' | 'pass_answer_down' }>;

/**
 * A run's live state: its messages, its event log, its status, its policy and the skills it has pinned. A turn is a
 * run; so is a skill run (skillWorkflow), which also tells its parent what it emits (`onEmit`).
 */
export class TurnRun {
  readonly log = new EventLog(() => new Date().toISOString());
  readonly state: TurnState;
  messages: ChatMessage[];
  /** The run machine's state (core/run/state.ts): changed only by `decide` and `step`. */
  machine: RunState = newRunState();
  private policyStarted = false;
  /** The skills loaded in this turn, pinned: load_skill, load_subskill and read_file serve these. */
  pinned: SkillTurnState = emptySkillTurnState();
  /** What the answer (or expiry) of the run's own checkpoint means for the call waiting at it (askHuman). */
  awaited: CheckpointOutcome | undefined;
  private decided: Ending | undefined;
  /** Characters per token, calibrated with the usage each response reports. */
  charsPerToken = 3.5;
  /** How much of the conversation the worker already holds: what the previous model call sent, and its response's content (model-call.ts). */
  synced: { count: number; digest: string; reply?: ChatMessage['content'] } | undefined;
  /** Whether search attribute changes are kept and sent as one upsert a workflow task (from batchAttributes on). */
  private batching = false;
  /** Search attribute changes not sent yet, by attribute: see setAttributes. */
  private readonly unsent = new Map<string, SearchAttributeUpdatePair>();
  /** Digests of the system prompt and tools the worker already holds for this run. */
  sentPrompt: { system: string; tools: string } | undefined;
  /** Digests and sizes of `messages`, each message measured once (core/transcript.ts). */
  readonly measure = new ConversationMeasure();
  /** This run's own model usage; `state.usage` adds the skill runs under it. */
  private ownUsage: Usage = zeroUsage();
  /** A skill run's validated final output (its declared output), when the policy accepted one. */
  structuredOutput: { value: unknown } | undefined;
  /** Called with every event this run emits (a skill run relays them to its parent). */
  onEmit: ((event: TurnEventBody) => void) | undefined;
  /** Where this run reserves its model rounds' tokens (spending bounds, with a budget); undefined: it reserves none. */
  ledgerScope: LedgerScope | undefined;

  constructor(
    readonly input: TurnInput,
    messages: ChatMessage[] = initialMessages(input),
    readonly place: RunPlace = { depth: 0, rootTurnId: input.turnId },
  ) {
    this.state = startingTurnState({
      turnId: input.turnId,
      sessionId: input.sessionId,
      userId: input.userId,
      createdAt: input.createdAt,
      updatedAt: new Date().toISOString(),
    });
    this.messages = messages;
    this.emit({ type: 'status', status: 'running' });
  }

  get settings() {
    return this.input.settings;
  }

  get depth(): number {
    return this.place.depth;
  }

  /** The turn's policy (core/policy), in the run machine's state. */
  get policy(): PolicyState {
    return this.machine.policy;
  }

  /** Applies a policy event: the policy's new state is kept, its position published, and its verdict returned. */
  decide(event: PolicyEvent): Verdict {
    const { state, verdict } = reducePolicy(this.policy, event);
    this.machine = { ...this.machine, policy: state };
    this.policyStarted = true;
    this.publishPosition();
    return verdict;
  }

  /**
   * Reduces an event in the run machine (core/run) and carries out the commands of its step, in order; a run asked
   * to cancel is known to the machine as such first. Returns the command that leads on, if any.
   */
  step(reduce: (state: RunState) => RunStep): Lead | undefined {
    if (!this.machine.cancelling && CancellationScope.current().consideredCancelled)
      this.machine = cancelRequested(this.machine);
    return this.take(reduce(this.machine));
  }

  /** Keeps a step's state and carries out its commands in order; the machine's stop for a cancel throws. */
  take(step: RunStep): Lead | undefined {
    this.machine = step.state;
    let lead: Lead | undefined;
    for (const command of step.commands) {
      switch (command.kind) {
        case 'show_checkpoint':
          this.showPending(command.checkpoint);
          break;
        case 'set_status':
          this.setStatus(command.status);
          break;
        case 'publish_position':
          this.publishPosition();
          break;
        case 'emit':
          this.emit(command.event);
          break;
        case 'relay':
          for (const event of command.events) this.relay(event);
          break;
        case 'count_child_usage':
          this.refreshUsage();
          break;
        case 'record_runs':
          this.recordSkillRuns(command.records);
          break;
        case 'resume_call':
          this.awaited = command.outcome;
          break;
        case 'stop_cancelled':
          throw new CancelledFailure(command.message);
        case 'reply_to_call':
        case 'pass_answer_down':
          lead = command;
          break;
      }
    }
    return lead;
  }

  /** What the session keeps for the next turn (what it was given, if the policy never started). */
  carry(): PlanCarry | undefined {
    return this.policyStarted ? carryOf(this.policy, this.pinned.loaded) : readPlanCarry(this.input.resume);
  }

  /** Appends an event to the log; inside a skill run it carries the run's depth unless it names its own (skill calls). */
  emit(event: TurnEventBody): void {
    const located = this.depth > 0 && event.depth === undefined ? { ...event, depth: this.depth } : event;
    this.relay(located);
  }

  /** Appends an event as it is (a skill run below relayed it, with its depth) and passes it on up. */
  relay(event: TurnEventBody): void {
    this.append(event);
    this.onEmit?.(event);
  }

  private append(event: TurnEventBody): void {
    const logged = this.log.append(event);
    this.state.updatedAt = new Date().toISOString();
    if (event.type === 'artifact') {
      const { name, mimeType, data, callId, depth } = event;
      this.state.artifacts!.push({ name, mimeType, data, callId: callId ?? '', depth: depth ?? 0 });
    }
    // Only the turn's own log is followed; a skill run's events reach it through the turn (relay).
    if (this.depth === 0) liveSink.eventLogged(this.input.turnId, logged, this.state);
  }

  /** From now on, keeps search attribute changes and sends those of a workflow task as one upsert. */
  batchAttributes(): void {
    this.batching = true;
    // The SDK checks conditions after each job of an activation and again once the code those jobs resumed has run as
    // far as it can, so a workflow task's changes go as one upsert before it completes (a handler's changes may go
    // before those of the code its job resumes). Not cancellable: a cancelled run's attributes still reach Temporal.
    void CancellationScope.nonCancellable(async () => {
      for (;;) {
        await condition(() => this.unsent.size > 0);
        this.sendAttributes();
      }
    });
  }

  /**
   * Sets search attributes: at once before the run starts batching them, then kept, the latest value of each, until
   * the workflow code waits (batchAttributes) or ends.
   */
  setAttributes(pairs: SearchAttributeUpdatePair[]): void {
    if (!this.batching) return upsertSearchAttributes(pairs);
    for (const pair of pairs) this.unsent.set(pair.key.name, pair);
  }

  /** Sends the search attribute changes kept so far as one upsert. */
  private sendAttributes(): void {
    if (this.unsent.size === 0) return;
    upsertSearchAttributes([...this.unsent.values()]);
    this.unsent.clear();
  }

  /** Shows the checkpoint this run waits for (its own, or one it mirrors from a skill run below), or none. */
  showPending(pending: PendingCheckpoint | null): void {
    if (this.state.pendingCheckpoint?.id === pending?.id) return;
    this.state.pendingCheckpoint = pending;
    this.setAttributes([{ key: searchAttributes.checkpoint, value: pending ? pending.name : null }]);
    this.publishDetails();
  }

  /**
   * The run's current details in the Temporal UI (the `__temporal_workflow_metadata` query): the checkpoint it waits at
   * with answers ready to paste, or nothing. Not a command: turns in flight replay unchanged.
   */
  publishDetails(): void {
    setCurrentDetails(
      checkpointDetails(this.state.pendingCheckpoint, {
        answerTo: this.place.rootTurnId,
        signal: checkpointDecisionSignal.name,
        update: answerCheckpointUpdate.name,
        ...(this.machine.mirrored ? { askedBy: this.machine.mirrored.workflowId } : {}),
        viaTurn: this.depth > 0,
      }),
    );
  }

  setStatus(status: TurnStatus, reason?: Reason): void {
    if (this.state.status === status && this.state.reason === reason) return;
    this.state.status = status;
    this.state.reason = reason;
    this.setAttributes([{ key: searchAttributes.status, value: status }]);
    this.emit({ type: 'status', status, ...(reason ? { reason } : {}) });
  }

  addUsage(usage: Usage): void {
    this.ownUsage = addUsage(this.ownUsage, usage);
    this.refreshUsage();
  }

  /** This run's usage: its own, and that of the skill runs it invoked (the run machine's). */
  private refreshUsage(): void {
    const children = Object.values(this.machine.children);
    this.state.usage = children.reduce((total, child) => addUsage(total, child.usage), this.ownUsage);
  }

  /** Adds or replaces execution records (by workflow id), keeping the order in which runs started. */
  recordSkillRuns(records: SkillExecution[]): void {
    const list = this.state.skills!;
    for (const record of records) {
      const index = list.findIndex((known) => known.workflowId === record.workflowId);
      if (index >= 0) list[index] = record;
      else list.push(record);
    }
  }

  /** Records an artifact: a skill's validated output. */
  emitArtifact(skill: string, data: unknown, callId: string): void {
    this.emit({ type: 'artifact', name: skill, mimeType: 'application/json', data, callId });
  }

  /**
   * Decides the ending and returns the result; nothing is visible yet. The turn tells its session first and then
   * publishes, so a client that sees the turn end can send the next message at once.
   */
  finish(ending: Ending): TurnResult {
    this.decided ??= this.settle(ending);
    const { skills, artifacts } = this.state;
    return {
      turnId: this.input.turnId,
      usage: this.state.usage,
      ...this.decided,
      ...(skills && skills.length > 0 ? { skills } : {}),
      ...(artifacts && artifacts.length > 0 ? { artifacts } : {}),
    };
  }

  /** The run has decided its ending (it may not have published it yet). */
  get ended(): boolean {
    return this.decided !== undefined;
  }

  /** The ending the run decided (`finish`); asked only once it has decided one. */
  get ending(): Ending {
    if (!this.decided) throw new Error('The run has not decided its ending yet.');
    return this.decided;
  }

  /** The ending a run decides for the one it was given, once (a skill run checks its declared output: SkillRun). */
  protected settle(ending: Ending): Ending {
    return ending;
  }

  /** Makes the ending visible: final status, output, and the single terminal event. */
  publishEnding(): void {
    const ending = this.decided;
    if (!ending || terminalStatuses.has(this.state.status)) return;
    this.state.output = ending.output;
    this.state.error = ending.status === 'failed' ? ending.error : undefined;
    // An ended run waits for nobody, whatever checkpoint it was at (the UI's current details). A run cancelled while it
    // waited at its own checkpoint, or at one of a skill run below (kept until now, so `waiting` never shows without
    // it), left it in its state and SkillflowCheckpoint; `mirroring` is cleared with it.
    setCurrentDetails('');
    if (this.state.pendingCheckpoint) this.showPending(null);
    this.setStatus(ending.status, ending.reason);
    if (ending.status === 'completed') this.emit({ type: 'done', output: ending.output ?? '' });
    else if (ending.status === 'cancelled') this.emit({ type: 'cancelled', reason: ending.reason });
    else this.emit({ type: 'error', code: ending.error.code, message: ending.error.message });
    // Before the workflow completes: nothing may follow its completion.
    this.sendAttributes();
  }

  /** The plan's position, everywhere an operator or client looks: turn state, step events, search attributes. */
  private publishPosition(): void {
    const { skill, step, remaining } = positionOf(this.policy);
    const state = this.state;
    if (state.skill === skill && state.step === step && state.remaining.join() === remaining.join()) return;
    state.skill = skill;
    state.step = step;
    state.remaining = remaining;
    this.setAttributes([
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
    messages.push(
      { role: 'user', content: exchange.user },
      { role: 'assistant', content: exchange.assistant || '(no answer)' },
    );
  }
  messages.push({ role: 'user', content: input.message });
  return messages;
}
