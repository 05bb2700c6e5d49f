import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatPlan, type SkillManifest, type SkillProblem } from '../core/skills';
import { sidecarJsonSchema } from '../core/skills/sidecar-schema';
import { environmentWithDotEnv } from '../lib/config';
import { validateSkillLibrary, type LibraryReport } from '../lib/skills';
import { chat } from './chat';
import { ConnectionSettingError } from './connect';
import { answer, inbox } from './inbox';
import type { CliIo } from './io';
import { defaultMoveWaitMs, legacy } from './legacy';
import { showRun } from './runs';
import { newSkill } from './scaffold';

export type { CliIo };

const usage = `Usage: skillflow <command> [options]

Commands:
  chat                    Chat with the engine: streams answers, asks you at checkpoints.
  inbox                   The turns waiting for a human (an operator key sees everyone's).
  answer TURN CHECKPOINT  Answer a pending checkpoint (--approve, --modify k=v..., --cancel, --choose X, --answer TEXT).
  runs show TURN          A turn's events and steps as a timeline.
  legacy                  The runs left on the old side of the version boundary (--move: move idle sessions across).
  skills validate [dir]   Check every skill in dir; exits 1 on any error (--strict: on any warning too).
  skills list [dir]       Show the skills in dir: name, category, description and plan.
  skills new NAME [dir]   Create a valid skill to start from.
  skills schema           Print the JSON Schema of skillflow.yaml (also in docs/skillflow.schema.json).

The API commands talk to SKILLFLOW_URL (default http://127.0.0.1:$PORT, port 3000) with SKILLFLOW_API_KEY (default the
key in $SKILLFLOW_DATA_DIR/api-key, which npm start generates). legacy talks to Temporal with the worker's settings
(TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, SKILLFLOW_TASK_QUEUE). A .env file in the working directory is read too.

Options:
  --json                  Machine-readable output (every command).
  -h, --help              Help; "skillflow COMMAND --help" for a command's own.
`;

const help: Record<string, string> = {
  chat: `Usage: skillflow chat [--session ID] [--skill NAME] [--json]

Reads one message per line from the terminal (or piped input) and streams the assistant's answer, tool calls and
plan steps. At a checkpoint it asks: approvals take y (approve), m (modify: then key=value lines), c (cancel) or an
option's number; questions take free text, an option's number, or /cancel. /quit or end of input ends the chat.

  --session ID   Rejoin a session, including a turn that waits at a checkpoint.
  --skill NAME   Start the first turn with this skill loaded.
  --json         Print every event as one JSON line on stdout (prompts go to stderr).

Ctrl-C leaves the running turn running and prints how to rejoin.
`,
  inbox: `Usage: skillflow inbox [--user USER] [--skill NAME] [--limit N] [--json]

The turns waiting for a human, oldest wait first: turn, user, skill, checkpoint, how long it has waited and its
deadline. Users see their own; an operator key sees everyone's.
`,
  answer: `Usage: skillflow answer TURN CHECKPOINT (--approve | --modify key=value... | --cancel | --choose OPTION | --answer TEXT) [--json]

CHECKPOINT is the pending checkpoint's id (cp-3, from skillflow inbox) or its name. --modify values are JSON when
they parse as JSON (5, true, ["a"]), else text.
`,
  runs: `Usage: skillflow runs show TURN [--json]

The turn's status, skill, step and usage, then every event of its log with the seconds since the turn started.
`,
  legacy: `Usage: skillflow legacy [--move [--wait SECONDS] [--by NAME]] [--json]

Counts the runs still on the old side of the version boundary (workflow types sessionWorkflow, turnWorkflow,
skillWorkflow) on the task queue, by type: running, waiting at a checkpoint, in a model call or tool. It talks to
Temporal directly, with the worker's settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, the TLS files or
TEMPORAL_PROFILE, SKILLFLOW_TASK_QUEUE).

  --move         Ask each legacy session with no turn running to continue as new on the current code, and list
                 each legacy turn or skill run waiting at a checkpoint as not movable yet (the current code cannot
                 restore one): moved, refused (with why) or failed per run. Exits 1 when any failed.
  --wait SECONDS How long --move waits for the runs it asked to cross (default ${defaultMoveWaitMs / 1000}).
  --by NAME      Who asks, recorded with the signal (default $USER, else "operator").
`,
  skills: `Usage: skillflow skills validate [dir] [--json] [--strict]
       skillflow skills list [dir] [--json]
       skillflow skills new NAME [dir]
       skillflow skills schema

dir defaults to $SKILLFLOW_SKILLS_DIR, or ./skills. Skill format: docs/skills.md.
--strict makes warnings fail too: a skill the spec accepts still loads with a warning (a broken metadata.plan is
ignored, so nothing enforces its order), which a skill author's CI should not let through.
`,
};

const processIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: environmentWithDotEnv(),
  cwd: process.cwd(),
  stdin: process.stdin,
  stdinIsTTY: process.stdin.isTTY === true,
  onInterrupt: (handler) => {
    process.once('SIGINT', handler);
    return () => process.off('SIGINT', handler);
  },
  exit: (code) => process.exit(code),
});

const options = {
  json: { type: 'boolean' },
  strict: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  session: { type: 'string' },
  skill: { type: 'string' },
  user: { type: 'string' },
  limit: { type: 'string' },
  approve: { type: 'boolean' },
  cancel: { type: 'boolean' },
  modify: { type: 'string', multiple: true },
  choose: { type: 'string' },
  answer: { type: 'string' },
  move: { type: 'boolean' },
  wait: { type: 'string' },
  by: { type: 'string' },
} as const;

/** Runs the CLI; returns the exit code (0 ok, 1 problems found or the API refused, 2 usage error). */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  let parsed;
  try {
    // `--modify a=1 b=2`: the values after --modify up to the next option all belong to it.
    parsed = parseArgs({ args: spreadModify(argv), options, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr(`skillflow: ${(err as Error).message}

${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (command === 'help' || (values.help && (!command || !help[command]))) {
    io.stdout(usage);
    return 0;
  }
  if (values.help) {
    io.stdout(help[command]);
    return 0;
  }
  const json = values.json === true;
  const wrong = (why: string) => {
    io.stderr(`skillflow: ${why}

${help[command] ?? usage}`);
    return 2;
  };
  try {
    switch (command) {
      case 'chat':
        return rest.length > 0
          ? wrong(`chat takes no arguments, got "${rest.join(' ')}"`)
          : await chat({ session: values.session, skill: values.skill, json }, io);
      case 'inbox': {
        const limit = values.limit === undefined ? undefined : Number(values.limit);
        if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100))
          return wrong('--limit must be a whole number from 1 to 100');
        return rest.length > 0
          ? wrong(`inbox takes no arguments, got "${rest.join(' ')}"`)
          : await inbox({ user: values.user, skill: values.skill, limit, json }, io);
      }
      case 'answer':
        if (rest.length !== 2) return wrong('answer needs TURN and CHECKPOINT');
        return await answer(
          rest[0],
          rest[1],
          {
            approve: values.approve === true,
            cancel: values.cancel === true,
            modify: values.modify,
            choose: values.choose,
            answer: values.answer,
            json,
          },
          io,
        );
      case 'runs':
        if (rest[0] !== 'show' || rest.length !== 2) return wrong('use: skillflow runs show TURN');
        return await showRun(rest[1], { json }, io);
      case 'legacy': {
        if (rest.length > 0) return wrong(`legacy takes no arguments, got "${rest.join(' ')}"`);
        const wait = values.wait === undefined ? defaultMoveWaitMs / 1000 : Number(values.wait);
        if (!(Number.isInteger(wait) && wait >= 0 && wait <= 3600))
          return wrong('--wait must be a whole number of seconds from 0 to 3600');
        if (!values.move && (values.wait !== undefined || values.by !== undefined))
          return wrong('--wait and --by go with --move');
        const by = values.by?.trim() || io.env.USER?.trim() || 'operator';
        return await legacy({ move: values.move === true, waitMs: wait * 1000, by, json }, io);
      }
      case 'skills':
        return await skills(rest, { json, strict: values.strict === true }, io, wrong);
      default:
        io.stderr(`${argv.length === 0 ? '' : `skillflow: unknown command "${argv.join(' ')}"\n\n`}${usage}`);
        return 2;
    }
  } catch (err) {
    if (!(err instanceof ConnectionSettingError)) throw err;
    io.stderr(`skillflow: ${err.message}\n`);
    return 2;
  }
}

function spreadModify(argv: string[]): string[] {
  const out: string[] = [];
  let inModify = false;
  for (const arg of argv) {
    if (arg === '--modify') inModify = true;
    else if (arg.startsWith('-')) inModify = false;
    else if (inModify && out.at(-1) !== '--modify' && arg.includes('=')) out.push('--modify');
    out.push(arg);
  }
  return out;
}

async function skills(
  args: string[],
  flags: { json: boolean; strict: boolean },
  io: CliIo,
  wrong: (why: string) => number,
): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'schema') {
    if (rest.length > 0) return wrong('skills schema takes no arguments');
    io.stdout(`${JSON.stringify(sidecarJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (command === 'new') {
    if (rest.length < 1 || rest.length > 2) return wrong('skills new needs NAME (and optionally dir)');
    return newSkill(rest[0], skillsDir(rest[1], io), io);
  }
  if ((command !== 'validate' && command !== 'list') || rest.length > 1) {
    io.stderr(`skillflow: unknown command "skills ${args.join(' ')}"\n\n${usage}`);
    return 2;
  }
  const report = await validateSkillLibrary(skillsDir(rest[0], io));
  const failing = (problem: SkillProblem) => problem.severity === 'error' || (flags.strict && command === 'validate');
  if (flags.json) return printJson(command, report, failing, io);
  return command === 'validate' ? printValidation(report, failing, io) : printList(report, io);
}

const skillsDir = (dirArg: string | undefined, io: CliIo) =>
  path.resolve(io.cwd, dirArg ?? io.env.SKILLFLOW_SKILLS_DIR ?? 'skills');

function printJson(
  command: string,
  report: LibraryReport,
  failing: (problem: SkillProblem) => boolean,
  io: CliIo,
): number {
  const errors = report.problems.filter((p) => p.severity === 'error').length;
  const body =
    command === 'validate'
      ? {
          skillsDir: report.skillsDir,
          valid: !report.problems.some(failing),
          skills: report.skills.map((s) => ({ folder: s.folder, valid: s.manifest !== null })),
          errors,
          warnings: report.problems.length - errors,
          problems: report.problems,
        }
      : {
          skills: report.skills.flatMap((s) => (s.manifest ? [listed(s.manifest)] : [])),
          skipped: report.skills.filter((s) => !s.manifest).map((s) => s.folder),
        };
  io.stdout(`${JSON.stringify(body, null, 2)}
`);
  return report.problems.some(failing) ? 1 : 0;
}

function listed(manifest: SkillManifest) {
  return {
    name: manifest.name,
    enabled: manifest.enabled,
    category: manifest.category,
    description: manifest.description,
    plan: manifest.plan?.source ?? null,
  };
}

function printValidation(report: LibraryReport, failing: (problem: SkillProblem) => boolean, io: CliIo): number {
  io.stdout(`Validating ${path.relative(io.cwd, report.skillsDir) || '.'}\n`);
  for (const problem of report.problems) io.stdout(formatCliProblem(problem, report.skillsDir, io.cwd));
  const errors = report.problems.filter((p) => p.severity === 'error').length;
  const warnings = report.problems.length - errors;
  const valid = report.skills.filter((s) => s.manifest).length;
  io.stdout(
    `${report.skills.length} skill${report.skills.length === 1 ? '' : 's'}: ${valid} valid, ${report.skills.length - valid} with errors; ` +
      `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}.\n`,
  );
  return report.problems.some(failing) ? 1 : 0;
}

export function formatCliProblem(problem: SkillProblem, skillsDir: string, cwd: string): string {
  const file = path.isAbsolute(problem.file) ? problem.file : path.join(skillsDir, problem.file);
  const where = `${path.relative(cwd, file) || file}${problem.field === '-' ? '' : `: ${problem.field}`}`;
  return `${problem.severity}: ${where}: ${problem.message}\n  fix: ${problem.fix}\n`;
}

function printList(report: LibraryReport, io: CliIo): number {
  const manifests = report.skills.flatMap((s) => (s.manifest ? [s.manifest] : []));
  const rows = [['NAME', 'CATEGORY', 'DESCRIPTION', 'PLAN'], ...manifests.map(row)];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((r) => r[column].length)));
  for (const r of rows)
    io.stdout(
      `${r
        .map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell))
        .join('  ')
        .trimEnd()}\n`,
    );
  const broken = report.skills.filter((s) => !s.manifest).map((s) => s.folder);
  if (broken.length > 0)
    io.stderr(`Skipped with errors: ${broken.join(', ')}. Run "skillflow skills validate" for details.\n`);
  return report.problems.some((p) => p.severity === 'error') ? 1 : 0;
}

function row(manifest: SkillManifest): string[] {
  const description = manifest.description.replace(/\s+/g, ' ');
  return [
    manifest.enabled ? manifest.name : `${manifest.name} (disabled)`,
    manifest.category ?? '-',
    description.length > 60 ? `${description.slice(0, 57)}...` : description,
    manifest.plan ? formatPlan(manifest.plan.root) : '-',
  ];
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`skillflow: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
