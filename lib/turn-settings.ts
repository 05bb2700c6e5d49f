import type { TurnSettings } from '../core/settings';
import type { Config } from './config';

export function turnSettingsFrom(config: Config): TurnSettings {
  return {
    modelMaxAttempts: config.modelMaxAttempts,
    modelTimeoutMs: config.modelTimeoutMs,
    historyWindow: config.historyWindow,
    historyWindowBytes: config.historyWindowBytes,
    maxRounds: config.maxRounds,
    maxEmptyRetries: config.maxEmptyRetries,
    maxContinuations: config.maxContinuations,
    contextWindowTokens: config.contextWindowTokens,
    contextBudgetFraction: config.contextBudgetFraction,
    checkpointTtlMs: config.checkpointTtlMs === 0 ? null : config.checkpointTtlMs,
    checkpointOnTimeout: config.checkpointOnTimeout,
    maxPlanViolations: config.maxPlanViolations,
    maxSkillDepth: config.maxSkillDepth,
    thinking: config.thinking,
    maxInvocationsPerResponse: config.maxInvocationsPerResponse,
    maxInvocationsPerTurn: config.maxInvocationsPerTurn,
    ...(config.thinkingBudgetTokens > 0 ? { thinkingBudgetTokens: config.thinkingBudgetTokens } : {}),
    ...(config.effort ? { effort: config.effort } : {}),
  };
}
