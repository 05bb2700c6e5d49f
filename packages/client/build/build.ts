import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { flattenTypes } from './flatten-types';
import { digestFile, inputsDigest, isUpToDate } from './inputs';
import { addJsExtensions, checkSpecifiers } from './specifiers';

const root = path.resolve(__dirname, '..', '..', '..');
const packageDir = path.join(root, 'packages', 'client');
const sourceDir = path.join(root, 'lib', 'client');
const dist = path.join(packageDir, 'dist');
/** Type-only: written out as plain declarations, never emitted as JavaScript. */
const typesFile = path.join(sourceDir, 'types.ts');

const formats = [
  { dir: 'esm', module: ts.ModuleKind.ES2022, type: 'module' },
  { dir: 'cjs', module: ts.ModuleKind.CommonJS, type: 'commonjs' },
] as const;

const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  strict: true,
  declaration: true,
  skipLibCheck: true,
  isolatedModules: true,
  types: ['node'],
  typeRoots: [path.join(root, 'node_modules', '@types')],
};

export type BuildResult = 'built' | 'up to date';

/**
 * Builds packages/client/dist from lib/client (the client's one source; its types from core/protocol): ES modules in
 * dist/esm and CommonJS in dist/cjs, each with declarations; `types.d.ts` holds the protocol's types written out
 * plainly, checked equal to the source's. Skipped when no input changed since the last build.
 */
export function buildClientPackage(): BuildResult {
  if (isUpToDate()) return 'up to date';
  const digest = inputsDigest();
  fs.rmSync(dist, { recursive: true, force: true });
  const program = ts.createProgram([path.join(sourceDir, 'index.ts')], options);
  const runtimeFiles = fs
    .readdirSync(sourceDir)
    .filter((name) => name.endsWith('.ts') && path.join(sourceDir, name) !== typesFile)
    .map((name) => path.join(sourceDir, name));
  const clientFiles = [...runtimeFiles, typesFile].map((file) => program.getSourceFile(file)!);
  failOn(
    [...program.getGlobalDiagnostics(), ...clientFiles.flatMap((file) => ts.getPreEmitDiagnostics(program, file))],
    'lib/client does not compile',
  );
  const declarations = emitDeclarations(program, runtimeFiles);
  declarations.set('types.d.ts', `${banner}${flattenTypes(program, typesFile)}`);
  for (const format of formats) {
    const out = path.join(dist, format.dir);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type: format.type })}\n`);
    for (const file of runtimeFiles) {
      const base = path.basename(file, '.ts');
      fs.writeFileSync(path.join(out, `${base}.js`), transpile(file, format.module));
    }
    for (const [name, text] of declarations) fs.writeFileSync(path.join(out, name), text);
    checkSpecifiers(out);
  }
  checkTypesEqual(program);
  fs.copyFileSync(path.join(root, 'LICENSE'), path.join(packageDir, 'LICENSE'));
  fs.writeFileSync(digestFile, digest);
  return 'built';
}

const banner = '// The protocol types of the skillflow API, written out from core/protocol by the package build.\n\n';

function transpile(file: string, module: ts.ModuleKind): string {
  const result = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
    compilerOptions: { ...options, module, declaration: false },
    fileName: file,
    reportDiagnostics: true,
    transformers: { before: [addJsExtensions] },
  });
  failOn(result.diagnostics ?? [], `${path.relative(root, file)} does not transpile`);
  return result.outputText;
}

function emitDeclarations(program: ts.Program, files: string[]): Map<string, string> {
  const declarations = new Map<string, string>();
  for (const file of files) {
    const result = program.emit(
      program.getSourceFile(file),
      (name, text) => declarations.set(path.basename(name), text),
      undefined,
      true,
      { afterDeclarations: [addJsExtensions] },
    );
    failOn(result.diagnostics, `the declarations of ${path.relative(root, file)}`);
  }
  return declarations;
}

/** Each type the package declares is the source's type: assignable both ways (a failed check names the type). */
function checkTypesEqual(program: ts.Program): void {
  const source = program.getSourceFile(typesFile)!;
  const module = program.getTypeChecker().getSymbolAtLocation(source)!;
  const names = program
    .getTypeChecker()
    .getExportsOfModule(module)
    .map((symbol) => symbol.name);
  // The written declarations are checked as a .ts file: a .d.ts would not be (skipLibCheck), and an unknown name in
  // it would pass the comparison as an error type.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-client-types-'));
  try {
    const built = path.join(dir, 'built.ts');
    fs.copyFileSync(path.join(dist, 'cjs', 'types.d.ts'), built);
    const check = path.join(dir, 'check.ts');
    const lines = [
      `import type * as Source from ${JSON.stringify(typesFile.replace(/\.ts$/, ''))};`,
      "import type * as Built from './built';",
      'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
      ...names.map((name) => `export const ${name}: Same<Source.${name}, Built.${name}> = true;`),
    ];
    fs.writeFileSync(check, `${lines.join('\n')}\n`);
    const checked = ts.createProgram(
      [check, built],
      { ...options, noEmit: true, declaration: false },
      undefined,
      program,
    );
    failOn(ts.getPreEmitDiagnostics(checked), "the package's declarations differ from lib/client's types");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function failOn(diagnostics: readonly ts.Diagnostic[], what: string): void {
  if (diagnostics.length === 0) return;
  const text = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  });
  throw new Error(`Building packages/client: ${what}:\n${text}`);
}
