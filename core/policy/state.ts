import {
  defaultMaxInvocationsPerResponse,
  defaultMaxInvocationsPerTurn,
  defaultMaxSkillDepth,
  defaultTurnSettings,
  type TurnSettings,
} from '../settings';
import type { PolicySettings, PolicyState } from './types';

/** The policy's settings from a turn's (sessions created before a setting existed lack it: its default). */
export function policySettingsOf(settings: Pick<TurnSettings, keyof PolicySettings>): PolicySettings {
  const {
    maxRounds,
    maxPlanViolations,
    checkpointTtlMs,
    checkpointOnTimeout,
    maxSkillDepth,
    maxInvocationsPerResponse,
    maxInvocationsPerTurn,
  } = settings;
  return {
    maxRounds,
    maxPlanViolations,
    checkpointTtlMs,
    checkpointOnTimeout,
    maxSkillDepth: maxSkillDepth ?? defaultMaxSkillDepth,
    maxInvocationsPerResponse: maxInvocationsPerResponse ?? defaultMaxInvocationsPerResponse,
    maxInvocationsPerTurn: maxInvocationsPerTurn ?? defaultMaxInvocationsPerTurn,
  };
}

/** A turn's policy before its `turn.started` event. */
export function newPolicyState(): PolicyState {
  return {
    settings: policySettingsOf(defaultTurnSettings),
    catalog: [],
    tools: [],
    headers: null,
    rootGrants: [],
    plan: null,
    route: null,
    active: null,
    usage: {},
    clockSince: null,
    violations: 0,
    roundsSinceHuman: 0,
    checkpointCount: 0,
    open: null,
    instructions: {},
    depth: 0,
    children: null,
    given: null,
    outputs: {},
    delegated: null,
    tokenBudget: null,
    invocations: { left: defaultMaxInvocationsPerTurn, inResponse: 0 },
  };
}
