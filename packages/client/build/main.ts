import { isUpToDate } from './inputs';

/**
 * `npm pack` (prepack) and the set-up of `npm start` and `npm test` build the package (build.ts), unless it is up to
 * date; the line logged goes to stderr, as `npm pack --json` owns stdout.
 */
async function main(): Promise<void> {
  const started = Date.now();
  if (isUpToDate()) return console.error('[client] packages/client is up to date');
  const { buildClientPackage } = await import('./build');
  console.error(`[client] packages/client ${buildClientPackage()} (${Date.now() - started} ms)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
