import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..', '..');
const packageDir = path.join(root, 'packages', 'client');
/** The digest of the inputs dist/ was built from. */
export const digestFile = path.join(packageDir, 'dist', '.inputs');

/** Whether dist/ was built from the inputs as they are now (read without loading the compiler, which takes seconds). */
export const isUpToDate = (): boolean =>
  fs.existsSync(digestFile) && fs.readFileSync(digestFile, 'utf8') === inputsDigest();

/** What the build reads: lib/client, core/ (the protocol and the types it is made of), the build, its settings. */
export function inputsDigest(): string {
  const compiler = JSON.parse(fs.readFileSync(require.resolve('typescript/package.json'), 'utf8')) as {
    version: string;
  };
  const hash = crypto.createHash('sha256').update(compiler.version);
  const files = [
    ...walk(path.join(root, 'lib', 'client')),
    ...walk(path.join(root, 'core')),
    ...walk(path.join(packageDir, 'build')),
    path.join(packageDir, 'package.json'),
    path.join(root, 'LICENSE'),
  ];
  for (const file of files) hash.update(`${path.relative(root, file)}\0`).update(fs.readFileSync(file));
  return hash.digest('hex');
}

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}
