import type { BundleOptions } from '@temporalio/worker';

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/**
 * The language level swc compiles skillflow's workflow code to. The SDK's bundler asks swc for ES2017, which turns
 * object spread and rest, `?.`, `??` and class fields into helper calls (`_object_spread` and the like) that run on
 * every activation; the workflow thread runs on the worker's Node (20 or later, as package.json requires), which has
 * them all, and tsconfig.json checks the code for the same target.
 */
export const workflowCodeTarget = 'es2022';

/**
 * The SDK's webpack configuration with swc compiling for `workflowCodeTarget`. Every bundle of the workflow code goes
 * through it: the worker's, the tests', the benchmark's and the frozen ones. Throws when the configuration has no swc
 * rule to set, so an SDK that changes its bundler is noticed rather than bundled for ES2017 again.
 */
export function withWorkflowCodeTarget(config: WebpackConfig): WebpackConfig {
  let set = 0;
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    const options =
      use && typeof use === 'object' && !Array.isArray(use) && String(use.loader).includes('swc-loader')
        ? use.options
        : undefined;
    const jsc = options && typeof options === 'object' ? (options as { jsc?: { target?: string } }).jsc : undefined;
    if (!jsc) continue;
    jsc.target = workflowCodeTarget;
    set++;
  }
  if (set === 0)
    throw new Error(
      "The Temporal SDK's webpack configuration has no swc-loader rule: worker/bundle-target.ts cannot set the workflow code's target.",
    );
  return config;
}
