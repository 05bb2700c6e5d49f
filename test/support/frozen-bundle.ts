import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * The frozen workflow bundle of a commit (test/fixtures/bundles), unpacked to a file a worker can load. Bundles are
 * stored without their source map (it would triple their size); a worker insists on an inline one, so an empty map
 * is appended: stack traces of the frozen code then point into the bundle itself.
 */
export function frozenWorkflowBundle(commit: string): string {
  const packed = path.resolve(__dirname, '..', 'fixtures', 'bundles', `workflows-${commit}.js.gz`);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-bundle-')), `workflows-${commit}.js`);
  const emptyMap = Buffer.from(
    JSON.stringify({ version: 3, file: path.basename(file), sources: [], names: [], mappings: '' }),
  ).toString('base64');
  fs.writeFileSync(
    file,
    `${gunzipSync(fs.readFileSync(packed)).toString('utf8')}\n//# sourceMappingURL=data:application/json;base64,${emptyMap}\n`,
  );
  return file;
}
