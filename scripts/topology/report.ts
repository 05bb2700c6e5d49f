import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './cluster';

export interface Figures {
  exams: { first: number; second: number; completed: number };
  kills: Array<{
    what: 'worker' | 'Temporal server' | 'API process';
    streaming: number;
    waiting: number;
    answeredBefore: number;
  }>;
  /** The rolling deploy of the new worker build: exams in flight at its start, how many went on on the new build. */
  deploy?: {
    streaming: number;
    waiting: number;
    inFlight: number;
    seconds: number;
    onNewBuild: number;
    nondeterministic: number;
  };
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
    `| exams completed (20 concurrent, then 20 through the kills) | ${figures.exams.completed} of ${figures.exams.first + figures.exams.second} |`,
    ...figures.kills.map(
      (kill) =>
        `| SIGKILL of the ${kill.what} (${kill.streaming} model calls streaming, ${kill.waiting} exams waiting at a checkpoint) | 1 |`,
    ),
    ...(figures.deploy
      ? [
          `| new worker build deployed, one worker at a time, in ${figures.deploy.seconds.toFixed(0)} s (${figures.deploy.inFlight} exams in flight, ${figures.deploy.streaming} model calls streaming, ${figures.deploy.waiting} exams waiting at a checkpoint) | 1 |`,
          `| exams in flight that went on on the new build (its patch marker in their history) | ${figures.deploy.onNewBuild} of ${figures.deploy.inFlight} |`,
          `| workflow tasks failed with a nondeterminism error | ${figures.deploy.nondeterministic} |`,
        ]
      : []),
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
