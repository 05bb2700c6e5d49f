import ts from 'typescript';

/**
 * The declarations of a module of type aliases, written out as plain TypeScript: every exported type expanded to the
 * object types, unions and literals it stands for, so the package's `types.d.ts` needs neither core/ nor TypeBox. An
 * exported type met inside another is written by its name. A recursive type or a generic one cannot be expanded and
 * fails the build with its name.
 */
export function flattenTypes(program: ts.Program, moduleFile: string): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(moduleFile);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`flattenTypes: ${moduleFile} is not a module of the program`);
  const exported = checker.getExportsOfModule(moduleSymbol).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return { name: symbol.name, symbol: target, type: checker.getDeclaredTypeOfSymbol(target) };
  });
  const names = new Map(exported.map(({ name, type }) => [type, name]));
  const printer = new TypePrinter(checker, names);
  const declarations = exported.map(({ name, symbol, type }) => {
    if (generic(symbol)) throw new Error(`flattenTypes: ${name} is generic; export its instances instead`);
    return `${docComment(checker, symbol, '')}export type ${name} = ${printer.print(type, '', name)};\n`;
  });
  for (let next = printer.interfaces.shift(); next; next = printer.interfaces.shift()) {
    const { name, type } = next;
    declarations.push(
      `${docComment(checker, type.getSymbol()!, '')}type ${name} = ${printer.print(type, '', name)};\n`,
    );
  }
  // `export {}` keeps the interfaces written above private to the file: a .d.ts would otherwise export them all.
  return `${declarations.join('\n')}\nexport {};\n`;
}

const generic = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some(
    (node) => (ts.isTypeAliasDeclaration(node) || ts.isInterfaceDeclaration(node)) && !!node.typeParameters?.length,
  );

function docComment(checker: ts.TypeChecker, symbol: ts.Symbol, indent: string): string {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  if (!text) return '';
  const lines = text.split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0].replace(/\*\//g, '* /')} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line.replace(/\*\//g, '* /')}`).join('\n')}\n${indent} */\n`;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

class TypePrinter {
  private readonly stack: ts.Type[] = [];
  /** The project's interfaces met so far, written once by name (they may be recursive, as a JSON schema is). */
  readonly interfaces: Array<{ name: string; type: ts.Type }> = [];

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly names: Map<ts.Type, string>,
  ) {}

  /** `self` is the name being declared, which must not refer to itself. */
  print(type: ts.Type, indent: string, self?: string): string {
    const name = this.names.get(type);
    if (name && name !== self) return name;
    const isInterface =
      type.flags & ts.TypeFlags.Object && (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Interface;
    if (isInterface && !this.builtin(type)) return name ? this.members(type, indent) : this.interfaceName(type);
    if (type.flags & ts.TypeFlags.Union) return this.union((type as ts.UnionType).types, indent);
    if (type.flags & ts.TypeFlags.Intersection) return this.intersection(type as ts.IntersectionType, indent);
    if (type.flags & ts.TypeFlags.StringLiteral) return JSON.stringify((type as ts.StringLiteralType).value);
    if (type.flags & ts.TypeFlags.Object) return this.object(type as ts.ObjectType, indent);
    const primitive =
      ts.TypeFlags.String |
      ts.TypeFlags.Number |
      ts.TypeFlags.Boolean |
      ts.TypeFlags.BooleanLiteral |
      ts.TypeFlags.NumberLiteral |
      ts.TypeFlags.Null |
      ts.TypeFlags.Undefined |
      ts.TypeFlags.Unknown |
      ts.TypeFlags.Any |
      ts.TypeFlags.Never |
      ts.TypeFlags.Void;
    if (type.flags & primitive) return this.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
    throw new Error(`flattenTypes: cannot write ${this.checker.typeToString(type)} as a plain type`);
  }

  private interfaceName(type: ts.Type): string {
    const name = type.getSymbol()!.name;
    if ([...this.names.values()].includes(name))
      throw new Error(`flattenTypes: two types are named ${name}; rename one, or export it from the types module`);
    this.names.set(type, name);
    this.interfaces.push({ name, type });
    return name;
  }

  private union(members: readonly ts.Type[], indent: string): string {
    const booleans = members.filter((member) => member.flags & ts.TypeFlags.BooleanLiteral);
    const rest = booleans.length === 2 ? members.filter((member) => !booleans.includes(member)) : members;
    const printed = rest.map((member) => this.print(member, indent));
    if (booleans.length === 2) printed.push('boolean');
    return printed.map((text) => (text.includes('=>') ? `(${text})` : text)).join(' | ');
  }

  private intersection(type: ts.IntersectionType, indent: string): string {
    if (type.types.every((member) => member.flags & ts.TypeFlags.Object && !this.builtin(member)))
      return this.members(type, indent);
    return type.types.map((member) => `(${this.print(member, indent)})`).join(' & ');
  }

  private object(type: ts.ObjectType, indent: string): string {
    if (this.checker.isArrayType(type)) {
      const [element] = this.checker.getTypeArguments(type as ts.TypeReference);
      const text = this.print(element, indent);
      const readonly = (type as ts.TypeReference).target.getSymbol()?.name === 'ReadonlyArray';
      if (/^[A-Za-z0-9_."]+$/.test(text)) return `${readonly ? 'readonly ' : ''}${text}[]`;
      return `${readonly ? 'ReadonlyArray' : 'Array'}<${text}>`;
    }
    if (this.checker.isTupleType(type))
      return `[${this.checker
        .getTypeArguments(type as ts.TypeReference)
        .map((element) => this.print(element, indent))
        .join(', ')}]`;
    if (this.builtin(type)) return this.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0)
      throw new Error(`flattenTypes: ${this.checker.typeToString(type)} is a function type; the protocol has none`);
    return this.members(type, indent);
  }

  /** An interface or class of the standard library or of a package (a `Date`, say) is written by its own name. */
  private builtin(type: ts.Type): boolean {
    const symbol = type.getSymbol();
    if (!symbol || !(symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class))) return false;
    return (symbol.declarations ?? []).some((node) => {
      const file = node.getSourceFile();
      return file.hasNoDefaultLib || file.fileName.includes('/node_modules/');
    });
  }

  private members(type: ts.Type, indent: string): string {
    if (this.stack.includes(type))
      throw new Error(`flattenTypes: ${this.checker.typeToString(type)} is recursive; the protocol's types are not`);
    this.stack.push(type);
    const inner = `${indent}  `;
    const lines: string[] = [];
    for (const info of this.checker.getIndexInfosOfType(type))
      lines.push(`${inner}[key: ${this.checker.typeToString(info.keyType)}]: ${this.print(info.type, inner)};`);
    for (const property of this.checker.getPropertiesOfType(type)) {
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const key = identifier.test(property.name) ? property.name : JSON.stringify(property.name);
      const text = this.property(this.checker.getTypeOfSymbol(property), optional, inner);
      lines.push(`${docComment(this.checker, property, inner)}${inner}${key}${optional ? '?' : ''}: ${text};`);
    }
    this.stack.pop();
    return lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`;
  }

  /** An optional property's type is written without the `undefined` that `?` adds. */
  private property(type: ts.Type, optional: boolean, indent: string): string {
    if (!optional || !(type.flags & ts.TypeFlags.Union) || this.names.has(type)) return this.print(type, indent);
    const kept = (type as ts.UnionType).types.filter((member) => !(member.flags & ts.TypeFlags.Undefined));
    if (kept.length === 1) return this.print(kept[0], indent);
    for (const [named, name] of this.names) {
      const members = named.flags & ts.TypeFlags.Union ? (named as ts.UnionType).types : [];
      if (members.length === kept.length && members.every((member) => kept.includes(member))) return name;
    }
    return this.union(kept, indent);
  }
}
