import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './cluster';

export interface Figures {
  exams: { first: number; second: number; third: number; completed: number };
  kills: Array<{
    what: 'worker' | 'Temporal server' | 'API process';
    streaming: number;
    waiting: number;
    answeredBefore: number;
  }>;
  /**
   * The rolling deploy across the version boundary (workers, then API processes): exams in flight at its start, how
   * many finished on the legacy types on the new build's workers, how many were moved across.
   */
  deploy?: {
    streaming: number;
    waiting: number;
    inFlight: number;
    seconds: number;
    legacyOnNewBuild: number;
    moved: number;
    nondeterministic: number;
  };
  /** `skillflow legacy --move` after the deploy, with `held` exams holding their answers at a checkpoint. */
  move?: { held: number; moved: number; refused: number; failed: number; seconds: number };
  /** Exams started after the deploy whose session and turn ran under the new types only. */
  newSide: number;
  /** `skillflow legacy` at the end: legacy runs still running, by kind. */
  legacyLeft: { session: number; turn: number; skillRun: number };
  repeatedModelCalls: number;
  examsWithRepeats: number;
  maxRepeatsPerExam: number;
  resumedStreams: number;
  examsResumed: number;
  /** Clients the mTLS frontend must refuse (plain TCP, no client certificate, another CA's): how many it did. */
  mtlsRefusals: { tried: number; refused: number };
  checkpointsAnswered: number;
  answersRetried: number;
  transcriptMisses: number;
  modelCalls: number;
  deltas: number;
  problems: string[];
  stages: Array<{ name: string; seconds: number }>;
  totalSeconds: number;
}

const reportFile = path.join(repoRoot, 'docs', 'reliability.md');
/** The line after which docs/reliability.md holds the last run's figures: everything below it is replaced. */
export const figuresMarker = 'The figures of the last run (each run replaces them):';

/** Writes one run's figures to docs/reliability.md in place of the previous run's; returns the file. */
export function writeReport(figures: Figures, commit: string): string {
  const date = new Date().toISOString().replace('T', ' ').slice(0, 16);
  const lines = [
    '',
    `## Run of ${date} UTC, commit ${commit}`,
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}. ` +
      `Result: **${figures.problems.length === 0 ? 'passed' : `failed (${figures.problems.length} problems)`}** in ${Math.round(figures.totalSeconds)} s.`,
    '',
    '| figure | value |',
    '|---|--:|',
    `| exams completed (${figures.exams.first} concurrent, then ${figures.exams.second} through the kills and the deploy, then ${figures.exams.third} on the deployed build) | ${figures.exams.completed} of ${figures.exams.first + figures.exams.second + figures.exams.third} |`,
    ...figures.kills.map(
      (kill) =>
        `| SIGKILL of the ${kill.what} (${kill.streaming} model calls streaming, ${kill.waiting} exams waiting at a checkpoint) | 1 |`,
    ),
    ...(figures.deploy
      ? [
          `| deploy across the version boundary, one worker then one API process at a time, in ${figures.deploy.seconds.toFixed(0)} s (${figures.deploy.inFlight} exams in flight, ${figures.deploy.streaming} model calls streaming, ${figures.deploy.waiting} exams waiting at a checkpoint) | 1 |`,
          `| exams in flight at the deploy that finished as legacy turns on the new build's workers / moved across | ${figures.deploy.legacyOnNewBuild} / ${figures.deploy.moved} of ${figures.deploy.inFlight} |`,
          `| workflow tasks failed with a nondeterminism error | ${figures.deploy.nondeterministic} |`,
        ]
      : []),
    ...(figures.move
      ? [
          `| \`skillflow legacy --move\` with ${figures.move.held} exams holding their answers: moved / refused / failed (seconds) | ${figures.move.moved} / ${figures.move.refused} / ${figures.move.failed} (${figures.move.seconds.toFixed(1)}) |`,
        ]
      : ['| `skillflow legacy --move` | not run (TOPOLOGY_MOVE=1 adds it) |']),
    `| exams started after the deploy that ran under the new types only | ${figures.newSide} of ${figures.exams.third} |`,
    `| legacy sessions / turns / skill runs still running at the end (\`skillflow legacy\`) | ${figures.legacyLeft.session} / ${figures.legacyLeft.turn} / ${figures.legacyLeft.skillRun} |`,
    `| clients refused by the mTLS frontend (plain TCP, no client certificate, another CA's certificate) | ${figures.mtlsRefusals.refused} of ${figures.mtlsRefusals.tried} |`,
    `| model calls, all exams | ${figures.modelCalls} |`,
    `| model calls repeated (exams affected, most in one exam) | ${figures.repeatedModelCalls} (${figures.examsWithRepeats}, ${figures.maxRepeatsPerExam}) |`,
    `| checkpoints answered (answers that needed a retry on the other API process) | ${figures.checkpointsAnswered} (${figures.answersRetried}) |`,
    `| SSE streams resumed with Last-Event-ID (exams) | ${figures.resumedStreams} (${figures.examsResumed}) |`,
    `| transcript misses | ${figures.transcriptMisses} |`,
    `| live message deltas received | ${figures.deltas} |`,
    '',
    '| stage | seconds |',
    '|---|--:|',
    ...figures.stages.map((stage) => `| ${stage.name} | ${stage.seconds.toFixed(1)} |`),
  ];
  if (figures.problems.length > 0)
    lines.push('', 'Problems:', '', ...figures.problems.slice(0, 20).map((problem) => `- ${problem}`));
  const text = fs.readFileSync(reportFile, 'utf8');
  const at = text.indexOf(figuresMarker);
  if (at < 0) throw new Error(`${reportFile} has no line "${figuresMarker}" to put the figures after`);
  fs.writeFileSync(reportFile, `${text.slice(0, at + figuresMarker.length)}\n${lines.join('\n')}\n`);
  return reportFile;
}
