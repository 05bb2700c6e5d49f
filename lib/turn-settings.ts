import type { TurnSettings } from '../core/settings';
import type { Config } from './config';

export function turnSettingsFrom(config: Config): TurnSettings {
  return {
    modelMaxAttempts: config.modelMaxAttempts,
    modelTimeoutMs: config.modelTimeoutMs,
    historyWindow: config.historyWindow,
  };
}
