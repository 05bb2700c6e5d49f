import path from 'node:path';
import { formatPlan, type SkillManifest, type SkillProblem } from '../core/skills';
import { validateSkillLibrary, type LibraryReport } from '../lib/skills';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
}

const usage = `Usage: skillflow <command>

Commands:
  skills validate [dir]   Check every skill in dir against the Agent Skills spec and skillflow's rules
                          (front matter, plan, skillflow.yaml, subskills, sizes, references between skills).
                          Exits 1 when any error is found.
  skills list [dir]       Show the skills in dir: name, category, description and plan.
                          Exits 1 when any skill has errors.

dir defaults to $SKILLFLOW_SKILLS_DIR, or ./skills.
Skill format: docs/skills.md.

Options:
  -h, --help              Show this help.
`;

const processIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
});

/** Runs the CLI; returns the exit code (0 ok, 1 problems found, 2 usage error). */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help') || argv[0] === 'help') {
    io.stdout(usage);
    return 0;
  }
  const [group, command, dirArg, ...rest] = argv;
  if (group !== 'skills' || (command !== 'validate' && command !== 'list') || rest.length > 0 || dirArg?.startsWith('-')) {
    io.stderr(`${argv.length === 0 ? '' : `skillflow: unknown command "${argv.join(' ')}"\n\n`}${usage}`);
    return 2;
  }
  const dir = path.resolve(io.cwd, dirArg ?? io.env.SKILLFLOW_SKILLS_DIR ?? 'skills');
  const report = await validateSkillLibrary(dir);
  return command === 'validate' ? printValidation(report, io) : printList(report, io);
}

function printValidation(report: LibraryReport, io: CliIo): number {
  io.stdout(`Validating ${path.relative(io.cwd, report.skillsDir) || '.'}\n`);
  for (const problem of report.problems) io.stdout(formatCliProblem(problem, report.skillsDir, io.cwd));
  const errors = report.problems.filter((p) => p.severity === 'error').length;
  const warnings = report.problems.length - errors;
  const valid = report.skills.filter((s) => s.manifest).length;
  io.stdout(
    `${report.skills.length} skill${report.skills.length === 1 ? '' : 's'}: ${valid} valid, ${report.skills.length - valid} with errors; ` +
      `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}.\n`,
  );
  return errors > 0 ? 1 : 0;
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
  for (const r of rows) io.stdout(`${r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell)).join('  ').trimEnd()}\n`);
  const broken = report.skills.filter((s) => !s.manifest).map((s) => s.folder);
  if (broken.length > 0) io.stderr(`Skipped with errors: ${broken.join(', ')}. Run "skillflow skills validate" for details.\n`);
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
