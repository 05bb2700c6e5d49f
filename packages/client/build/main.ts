import { buildClientPackage } from './build';

/** `npm pack` (prepack) builds the package (see build.ts); the line it logs goes to stderr, as `npm pack --json` owns stdout. */
const started = Date.now();
try {
  const result = buildClientPackage();
  console.error(`[client] packages/client ${result} (${Date.now() - started} ms)`);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
