import { CancellationScope, condition, patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { LedgerScope } from './core/budget';
import { checkpointDetails } from './core/checkpoint-details';
import type { CheckpointDecision, PendingCheckpoint } from './core/checkpoints';
import type { TurnEventBody } from './core/events';
import { EventLog } from './core/event-log';
import type { ChatMessage, ToolResultBlock, ToolUseBlock } from './core/messages';
import { addUsage, zeroUsage, type Usage } from './core/model';
import {
  carryOf,
  enginePatches,
  migratePlanCarry,
  newPolicyState,
  positionOf,
  reducePolicy,
  separatePatches,
  type CheckpointPlan,
  type PlanCarry,
  type PolicyEvent,
  type PolicyState,
  type Verdict,
} from './core/policy';
import type { Ending } from './core/run/endings';
import type { Reason } from './core/run/reasons';
import type { SkillExecution } from './core/schemas/skill-runs';
import { emptySkillTurnState, type SkillTurnState } from './core/skills';
import { ConversationMeasure } from './core/transcript';
import {
  startingTurnState,
  terminalStatuses,
  type TurnInput,
  type TurnResult,
  type TurnState,
  type TurnStatus,
} from './core/turn';
import { answerCheckpointUpdate, checkpointDecisionSignal } from './definitions';
import { searchAttributes } from './search-attributes';
import { liveSink } from './sinks';

/** A tool call waiting at its checkpoint: the checkpoint's plan, the call, its tool.start, the calls before and after. */
export interface WaitingCall {
  ask: CheckpointPlan;
  call: ToolUseBlock;
  callEvent: { name: string; isSkill?: true; depth?: number; source?: string; server?: string };
  earlier: ToolResultBlock[];
  later: ToolUseBlock[];
}

/** Where a run sits: a turn (depth 0), or a skill run under the turn `rootTurnId`. */
export interface RunPlace {
  depth: number;
  rootTurnId: string;
}

/** What the run knows of a skill run it invoked: its latest word, and the checkpoints already passed down to it. */
export interface ChildLink {
  seq: number;
  usage: Usage;
  forwarded: Set<string>;
}

/**
 * A run's live state: its messages, its event log, its status, its policy and the skills it has pinned. A turn is a
 * run; so is a skill run (skillWorkflow), which also tells its parent what it emits (`onEmit`).
 */
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
  private decided: Ending | undefined;
  /** Characters per token, calibrated with the usage each response reports. */
  charsPerToken = 3.5;
  /** How much of the conversation the worker already holds: what the previous model call sent, and its response's content (model-call.ts). */
  synced: { count: number; digest: string; reply?: ChatMessage['content'] } | undefined;
  /** The engine changes of the code this run started on (workflows/run-rules.ts); none before it reads them (useEngine). */
  engine: Record<keyof typeof enginePatches, boolean> = { promptByReference: false, batchedSearchAttributes: false };
  /** Search attribute changes not sent yet, by attribute (engine.batchedSearchAttributes): see setAttributes. */
  private readonly unsent = new Map<string, SearchAttributeUpdatePair>();
  /** Digests of the system prompt and tools the worker already holds for this run (with engine.promptByReference). */
  sentPrompt: { system: string; tools: string } | undefined;
  /** Digests and sizes of `messages`, each message measured once (core/transcript.ts). */
  readonly measure = new ConversationMeasure();
  /** This run's own model usage; `state.usage` adds the skill runs under it. */
  private ownUsage: Usage = zeroUsage();
  /** The skill runs it invoked, by workflow id. */
  readonly children = new Map<string, ChildLink>();
  /** The skill run whose checkpoint this run mirrors as its pending one. */
  mirroring: string | undefined;
  /** A skill run's validated final output (its declared output), when the policy accepted one. */
  structuredOutput: { value: unknown } | undefined;
  /** Called with every event this run emits (a skill run relays them to its parent). */
  onEmit: ((event: TurnEventBody) => void) | undefined;
  /** Where this run reserves its model rounds' tokens (spending bounds, with a budget); undefined: it reserves none. */
  ledgerScope: LedgerScope | undefined;
  /** The tool call whose checkpoint this run waits at, as dispatchToolCalls holds it (a move carries it: move.ts). */
  waitingCall: WaitingCall | undefined;

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

  /** Takes the engine changes of the code this run started on; with batched search attributes, starts sending them. */
  useEngine(engine: Record<keyof typeof enginePatches, boolean>): void {
    this.engine = engine;
    if (!engine.batchedSearchAttributes) return;
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
   * Sets search attributes: at once in runs of code before batchedSearchAttributes (one upsert per change, as their
   * histories hold), else kept, the latest value of each, until the workflow code waits (useEngine) or ends.
   */
  setAttributes(pairs: SearchAttributeUpdatePair[]): void {
    if (!this.engine.batchedSearchAttributes) return upsertSearchAttributes(pairs);
    for (const pair of pairs) this.unsent.set(pair.key.name, pair);
  }

  /** Sends the search attribute changes kept so far as one upsert. */
  private sendAttributes(): void {
    if (this.unsent.size === 0) return;
    upsertSearchAttributes([...this.unsent.values()]);
    this.unsent.clear();
  }

  /** Shows the checkpoint this run waits for (its own, or one it mirrors from a skill run below), or none. */
  showPending(pending: PendingCheckpoint | null, skillRun?: string): void {
    if (this.state.pendingCheckpoint?.id === pending?.id) return;
    this.state.pendingCheckpoint = pending;
    this.mirroring = pending ? skillRun : undefined;
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
        ...(this.mirroring ? { askedBy: this.mirroring } : {}),
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

  ownUsageOf(): Usage {
    return this.ownUsage;
  }

  addUsage(usage: Usage): void {
    this.ownUsage = addUsage(this.ownUsage, usage);
    this.refreshUsage();
  }

  /** A skill run's usage so far (its own and its runs'), counted into this run's. */
  setChildUsage(workflowId: string, usage: Usage): void {
    const link = this.children.get(workflowId);
    if (!link) return;
    link.usage = usage;
    this.refreshUsage();
  }

  private refreshUsage(): void {
    this.state.usage = [...this.children.values()].reduce((total, link) => addUsage(total, link.usage), this.ownUsage);
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

  /**
   * This run was asked to cancel (its workflow was cancelled; a skill run's also when its turn was) and runs the code of
   * separatePatches.cancelEndsAtSkillReturn. Read, and its marker recorded, only once a cancel was requested: a run
   * whose history was made before the change has no marker there and replays as it ran. It may record a marker, so it
   * is for the workflow's own code and signal handlers only, never a query handler or an update validator.
   */
  cancelRequested(): boolean {
    return CancellationScope.current().consideredCancelled && patched(separatePatches.cancelEndsAtSkillReturn);
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
    // waited at its own checkpoint, or at one of a skill run below (cancelKeepsCheckpoint: kept until now, so `waiting`
    // never shows without it), left it in its state and SkillflowCheckpoint; `mirroring` is cleared with it.
    setCurrentDetails('');
    if (this.state.pendingCheckpoint && patched(separatePatches.endingClearsCheckpoint)) this.showPending(null);
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
