import type { ModelDeps } from '../activities/model';
import type { Config } from '../lib/config';

export function modelDepsFrom(config: Config): ModelDeps {
  return {
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxTokens: config.modelMaxTokens,
    timeoutMs: config.modelTimeoutMs,
  };
}
