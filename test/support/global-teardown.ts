import fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  await globalThis.skillflowDevServer?.stop();
  if (globalThis.skillflowTestDir) fs.rmSync(globalThis.skillflowTestDir, { recursive: true, force: true });
}
