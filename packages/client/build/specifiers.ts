import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const relative = (specifier: string) => specifier.startsWith('./') && !specifier.endsWith('.js');

/** `./sse` becomes `./sse.js` in imports and exports, as ES modules in Node and browsers need it. */
export const addJsExtensions = <T extends ts.SourceFile | ts.Bundle>(context: ts.TransformationContext) => {
  const { factory } = context;
  const rewrite = (specifier: ts.Expression | undefined) =>
    specifier && ts.isStringLiteral(specifier) && relative(specifier.text)
      ? factory.createStringLiteral(`${specifier.text}.js`)
      : specifier;
  const visit = (node: ts.Node): ts.Node => {
    if (ts.isImportDeclaration(node))
      return factory.updateImportDeclaration(
        node,
        node.modifiers,
        node.importClause,
        rewrite(node.moduleSpecifier)!,
        node.attributes,
      );
    if (ts.isExportDeclaration(node))
      return factory.updateExportDeclaration(
        node,
        node.modifiers,
        node.isTypeOnly,
        node.exportClause,
        rewrite(node.moduleSpecifier),
        node.attributes,
      );
    return node;
  };
  return (file: T): T => (ts.isSourceFile(file) ? ts.visitEachChild(file, visit, context) : file) as T;
};

/**
 * The built files import only each other: a specifier that leaves the folder (core/, a package) would be a runtime
 * dependency the package does not declare, so it fails the build.
 */
export function checkSpecifiers(dir: string): void {
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'));
  for (const name of files) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(dir, name), 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      const target = fileName.replace(/\.js$/, name.endsWith('.d.ts') ? '.d.ts' : '.js');
      const inside = fileName.startsWith('./') && fileName.endsWith('.js') && !fileName.slice(2).includes('/');
      if (!inside || !fs.existsSync(path.join(dir, target)))
        throw new Error(
          `Building packages/client: ${path.basename(dir)}/${name} imports ${fileName}, which is not a file of the package; the client must import only lib/client's own modules at run time (types from core/ go through types.ts).`,
        );
    }
  }
}
