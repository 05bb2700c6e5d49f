/**
 * Variables in an MCP configuration's strings, as Claude Code and VS Code write them: `${VAR}`, `${VAR:-default}`
 * (the default when VAR is unset or empty) and VS Code's `${env:VAR}`, from the environment; `${workspaceFolder}` is
 * the folder of the configuration (the one holding `.vscode/` for a file inside it). `$` not followed by `{` is kept.
 */
export type Expansion = { ok: true; value: string } | { ok: false; problem: string };

export interface ExpandContext {
  env: Record<string, string | undefined>;
  workspaceFolder: string;
}

const reference = /\$\{([^}]*)\}/g;
const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The string with its variables replaced, or why one cannot be: never the value of any variable. */
export function expandVariables(text: string, context: ExpandContext): Expansion {
  const problems: string[] = [];
  const value = text.replace(reference, (whole, inner: string) => {
    const resolved = resolve(inner, context);
    if (typeof resolved === 'string') return resolved;
    problems.push(resolved.problem);
    return whole;
  });
  return problems.length > 0 ? { ok: false, problem: problems.join('; ') } : { ok: true, value };
}

function resolve(inner: string, context: ExpandContext): string | { problem: string } {
  if (inner === 'workspaceFolder') return context.workspaceFolder;
  if (inner.startsWith('input:')) {
    return {
      problem: `\${${inner}} asks VS Code to prompt for a value, which a worker cannot do: set an environment variable and write \${env:NAME} or \${NAME}`,
    };
  }
  const vsCode = inner.startsWith('env:');
  const body = vsCode ? inner.slice('env:'.length) : inner;
  const split = vsCode ? -1 : body.indexOf(':-');
  const name = split === -1 ? body : body.slice(0, split);
  if (!variableName.test(name)) {
    return {
      problem: `\${${inner}} is not a variable reference skillflow reads (\${NAME}, \${NAME:-default}, \${env:NAME} or \${workspaceFolder})`,
    };
  }
  const set = context.env[name];
  if (split !== -1) return set === undefined || set === '' ? body.slice(split + 2) : set;
  if (set === undefined)
    return {
      problem: `the environment variable ${name} is not set: set it, or give a default as \${${name}:-default}`,
    };
  return set;
}
