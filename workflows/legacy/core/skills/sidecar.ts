import { durationFix, parseDuration } from './durations';
import { checkFields, type Report } from './field-specs';
import { parseGrant } from '../tools/grants';
import { canonicalSkillName, isKebabWord, isSkillName, isSnakeName } from './names';
import { closest, describeValue, isPlainObject, sidecarFileName, type ProblemList } from './problems';
import {
  checkpointKinds,
  deadlineUnits,
  onTimeoutPolicies,
  type CheckpointKind,
  type CheckpointSpec,
  type DeadlineSource,
  type DeadlineSpec,
  type DeadlineUnit,
  type FreeCheckpointPolicy,
  type OnTimeout,
  type RouteOption,
  type SkillLimits,
  type SkillManifest,
  type StepLimit,
} from './types';

/** The engine data of `skillflow.yaml`, the strictly validated sidecar beside SKILL.md (docs/skills.md). */
export const sidecarKeys = [
  'parameters',
  'output',
  'checkpoints',
  'free-checkpoints',
  'deadlines',
  'steps',
  'limits',
  'children',
  'tools',
] as const;

/** The engine data a sidecar declares: the manifest's fields of the same names (`inPlan` is filled in by the manifest). */
export type SidecarSpec = Pick<
  SkillManifest,
  | 'parameters'
  | 'output'
  | 'checkpoints'
  | 'freeCheckpoints'
  | 'deadlines'
  | 'stepLimits'
  | 'limits'
  | 'children'
  | 'tools'
>;

export const emptySidecar = (): SidecarSpec => ({
  parameters: [],
  output: [],
  checkpoints: [],
  freeCheckpoints: null,
  deadlines: [],
  stepLimits: [],
  limits: { maxIterations: null, timeoutMs: null },
  children: [],
  tools: null,
});

/** Checks the sidecar's shape and types; references to the plan and to other skills are checked later. */
export function checkSidecar(data: unknown, problems: ProblemList): SidecarSpec {
  const spec = emptySidecar();
  if (data === undefined || data === null) return spec;
  const report: Report = (field, message, fix) => problems.error(sidecarFileName, field, message, fix);
  if (!isPlainObject(data)) {
    report(
      '-',
      `skillflow.yaml holds ${describeValue(data)}, not a map`,
      `start it with top-level keys such as ${sidecarKeys.slice(0, 3).join(', ')}.`,
    );
    return spec;
  }
  unknownKeys(data, sidecarKeys, '', report);
  spec.parameters = checkFields(data.parameters, 'parameters', report);
  spec.output = checkFields(data.output, 'output', report);
  spec.checkpoints = checkCheckpoints(data.checkpoints, report);
  spec.freeCheckpoints = checkFreeCheckpoints(data['free-checkpoints'], report);
  spec.deadlines = checkDeadlines(data.deadlines, report);
  spec.stepLimits = checkStepLimits(data.steps, report);
  spec.limits = checkLimits(data.limits, report);
  spec.children = checkNameList(
    data.children,
    'children',
    isSkillName,
    'skill names (lowercase letters, digits, single hyphens)',
    report,
  ).map(canonicalSkillName);
  spec.tools =
    data.tools === undefined
      ? null
      : checkNameList(
          data.tools,
          'tools',
          (word) => parseGrant(word) !== null,
          'tool grants: tool names (letters, digits, _ and -), category:NAME or mcp:SERVER',
          report,
        );
  return spec;
}

function unknownKeys(map: Record<string, unknown>, allowed: readonly string[], path: string, report: Report): void {
  for (const key of Object.keys(map)) {
    if (allowed.includes(key)) continue;
    const near = closest(key, allowed);
    const field = path ? `${path}.${key}` : key;
    report(
      field,
      `"${key}" is not a known key${path ? ` of ${path}` : ''}`,
      near ? `did you mean "${near}"?` : `use only ${allowed.join(', ')}.`,
    );
  }
}

function mapOf(value: unknown, path: string, example: string, report: Report): Record<string, unknown> | null {
  if (value === undefined) return null;
  if (isPlainObject(value)) return value;
  report(path, `${path} is ${describeValue(value)}, not a map`, `write it as a map, e.g. ${example}.`);
  return null;
}

function ttlAndPolicy<P extends string>(
  entry: Record<string, unknown>,
  path: string,
  policies: readonly P[],
  report: Report,
): { ttlMs: number | null; onTimeout: P | 'cancel' } {
  let ttlMs: number | null = null;
  if (entry.ttl !== undefined) {
    ttlMs = parseDuration(entry.ttl);
    if (ttlMs === null) report(`${path}.ttl`, `ttl ${JSON.stringify(entry.ttl)} is not a duration`, durationFix);
  }
  const policy = entry['on-timeout'];
  if (policy === undefined) return { ttlMs, onTimeout: 'cancel' };
  if (typeof policy !== 'string' || !(policies as readonly string[]).includes(policy)) {
    report(
      `${path}.on-timeout`,
      `on-timeout ${JSON.stringify(policy)} is not a policy`,
      `use one of ${policies.join(', ')}.`,
    );
    return { ttlMs, onTimeout: 'cancel' };
  }
  if (entry.ttl === undefined)
    report(`${path}.on-timeout`, 'on-timeout has no ttl to act on', 'add a ttl, e.g. ttl: 30m, or remove on-timeout.');
  return { ttlMs, onTimeout: policy as P };
}

export const checkpointKeys = ['kind', 'ttl', 'on-timeout', 'params', 'routes'] as const;

function checkCheckpoints(value: unknown, report: Report): CheckpointSpec[] {
  const map = mapOf(value, 'checkpoints', 'checkpoints: { exam_params: { ttl: 30m } }', report);
  if (!map) return [];
  return Object.entries(map).flatMap(([name, raw]) => {
    const path = `checkpoints.${name}`;
    if (!isSnakeName(name)) {
      report(
        path,
        `checkpoint name "${name}" is not snake_case`,
        'start with a-z and use only a-z, 0-9 and _, e.g. exam_params.',
      );
      return [];
    }
    const entry = raw === null ? {} : raw;
    if (!isPlainObject(entry)) {
      report(
        path,
        `${path} is ${describeValue(entry)}, not a map`,
        'give the checkpoint kind, ttl, on-timeout, params or routes lines, indented under its name.',
      );
      return [];
    }
    unknownKeys(entry, checkpointKeys, path, report);
    let kind: CheckpointKind = 'approval';
    if (entry.kind !== undefined) {
      if (typeof entry.kind === 'string' && (checkpointKinds as readonly string[]).includes(entry.kind))
        kind = entry.kind as CheckpointKind;
      else
        report(
          `${path}.kind`,
          `kind ${JSON.stringify(entry.kind)} is not a checkpoint kind`,
          `use one of ${checkpointKinds.join(', ')}.`,
        );
    }
    const { ttlMs, onTimeout } = ttlAndPolicy<OnTimeout>(entry, path, onTimeoutPolicies, report);
    const params = checkFields(entry.params, `${path}.params`, report);
    const routes = checkRoutes(entry.routes, `${path}.routes`, report);
    if (routes.length > 0 && onTimeout === 'approve-defaults') {
      report(
        `${path}.on-timeout`,
        'a routing checkpoint has no default route to approve',
        'use skip (no route: only the final answer) or cancel.',
      );
    }
    if (onTimeout === 'approve-defaults') {
      for (const param of params.filter((p) => p.default === undefined)) {
        report(
          `${path}.params.${param.name}.default`,
          `on-timeout approve-defaults needs a default for every param, and ${param.name} has none`,
          `add a default to ${param.name}, or pick another on-timeout policy.`,
        );
      }
    }
    return [{ name, kind, ttlMs, onTimeout, params, routes, inPlan: false }];
  });
}

function checkRoutes(value: unknown, path: string, report: Report): RouteOption[] {
  const map = mapOf(value, path, 'routes: { study-guide-creator: "Full restudy", stop: "Stop here" }', report);
  if (!map) return [];
  const routes: RouteOption[] = [];
  for (const [id, label] of Object.entries(map)) {
    if (id !== 'stop' && !isSkillName(id)) {
      report(
        `${path}.${id}`,
        `route "${id}" is neither a skill name nor stop`,
        'key each route by the skill it allows next, or by stop.',
      );
      continue;
    }
    if (typeof label !== 'string' || label.trim() === '') {
      report(
        `${path}.${id}`,
        `the label of route ${id} is ${typeof label === 'string' ? 'empty' : describeValue(label)}`,
        'write the text the human sees for this choice.',
      );
      continue;
    }
    routes.push({ id, label: label.trim(), skill: id === 'stop' ? null : canonicalSkillName(id) });
  }
  if (routes.length === 1)
    report(
      path,
      'a routing checkpoint with one route offers no choice',
      'add another route (for example stop), or remove routes.',
    );
  return routes;
}

export const freeCheckpointKeys = ['ttl', 'on-timeout'] as const;
export const freeCheckpointPolicies = ['cancel', 'skip'] as const;

function checkFreeCheckpoints(value: unknown, report: Report): FreeCheckpointPolicy | null {
  const map = mapOf(value, 'free-checkpoints', 'free-checkpoints: { ttl: 15m, on-timeout: skip }', report);
  if (!map) return null;
  unknownKeys(map, freeCheckpointKeys, 'free-checkpoints', report);
  const { ttlMs, onTimeout } = ttlAndPolicy(map, 'free-checkpoints', freeCheckpointPolicies, report);
  return { ttlMs, onTimeout };
}

export const deadlineKeys = ['from', 'unit', 'after', 'jump-to'] as const;

function checkDeadlines(value: unknown, report: Report): DeadlineSpec[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    report(
      'deadlines',
      `deadlines is ${describeValue(value)}, not a list`,
      'write "- from: CHECKPOINT.PARAM" or "- after: DURATION" items, each with jump-to.',
    );
    return [];
  }
  return value.flatMap((raw, index): DeadlineSpec[] => {
    const path = `deadlines[${index}]`;
    if (!isPlainObject(raw)) {
      report(path, `${path} is ${describeValue(raw)}, not a map`, 'give the deadline from (or after) and jump-to.');
      return [];
    }
    unknownKeys(raw, deadlineKeys, path, report);
    const jumpTo = raw['jump-to'];
    if (typeof jumpTo !== 'string' || !isKebabWord(jumpTo)) {
      report(
        `${path}.jump-to`,
        jumpTo === undefined ? 'jump-to is missing' : `jump-to ${JSON.stringify(jumpTo)} is not a step name`,
        'name the plan step to go to when time is up, e.g. jump-to: performance-analytics.',
      );
      return [];
    }
    const source = deadlineSource(raw, path, report);
    return source ? [{ source, jumpTo }] : [];
  });
}

function deadlineSource(raw: Record<string, unknown>, path: string, report: Report): DeadlineSource | null {
  if ((raw.from === undefined) === (raw.after === undefined)) {
    report(
      path,
      'a deadline needs exactly one of from and after',
      'use from: CHECKPOINT.PARAM (a time the human approves) or after: DURATION (from when the skill loads).',
    );
    return null;
  }
  if (raw.after !== undefined) {
    const ms = parseDuration(raw.after);
    if (ms === null) report(`${path}.after`, `after ${JSON.stringify(raw.after)} is not a duration`, durationFix);
    if (raw.unit !== undefined)
      report(`${path}.unit`, 'unit goes with from, not with after', 'remove unit; the duration carries its own unit.');
    return ms === null ? null : { kind: 'fixed', ms };
  }
  const match = typeof raw.from === 'string' ? /^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$/.exec(raw.from) : null;
  if (!match) {
    report(
      `${path}.from`,
      `from ${JSON.stringify(raw.from)} is not CHECKPOINT.PARAM`,
      'name a checkpoint and one of its numeric params, e.g. from: exam_params.time_limit_min.',
    );
    return null;
  }
  if (typeof raw.unit !== 'string' || !(deadlineUnits as readonly string[]).includes(raw.unit)) {
    report(
      `${path}.unit`,
      raw.unit === undefined ? 'unit is missing' : `unit ${JSON.stringify(raw.unit)} is not a time unit`,
      `say what the param counts: ${deadlineUnits.join(', ')}.`,
    );
    return null;
  }
  return { kind: 'param', checkpoint: match[1], param: match[2], unit: raw.unit as DeadlineUnit };
}

export const stepLimitKeys = ['max-runs'] as const;

function checkStepLimits(value: unknown, report: Report): StepLimit[] {
  const map = mapOf(value, 'steps', 'steps: { adaptive-difficulty: { max-runs: 60 } }', report);
  if (!map) return [];
  return Object.entries(map).flatMap(([step, raw]) => {
    const path = `steps.${step}`;
    if (!isPlainObject(raw)) {
      report(path, `${path} is ${describeValue(raw)}, not a map`, 'write max-runs: N indented under the step name.');
      return [];
    }
    unknownKeys(raw, stepLimitKeys, path, report);
    const maxRuns = raw['max-runs'];
    if (!Number.isInteger(maxRuns) || (maxRuns as number) < 1) {
      report(
        `${path}.max-runs`,
        `max-runs ${JSON.stringify(maxRuns)} is not a whole number of at least 1`,
        'write how many times the step may run in one turn, e.g. max-runs: 60.',
      );
      return [];
    }
    return [{ step, maxRuns: maxRuns as number }];
  });
}

export const limitKeys = ['max-iterations', 'timeout'] as const;

function checkLimits(value: unknown, report: Report): SkillLimits {
  const limits: SkillLimits = { maxIterations: null, timeoutMs: null };
  const map = mapOf(value, 'limits', 'limits: { max-iterations: 40, timeout: 1h }', report);
  if (!map) return limits;
  unknownKeys(map, limitKeys, 'limits', report);
  const iterations = map['max-iterations'];
  if (iterations !== undefined) {
    if (Number.isInteger(iterations) && (iterations as number) >= 1 && (iterations as number) <= 1000)
      limits.maxIterations = iterations as number;
    else
      report(
        'limits.max-iterations',
        `max-iterations ${JSON.stringify(iterations)} is not a whole number from 1 to 1000`,
        'write the most model rounds the skill may take, e.g. max-iterations: 40.',
      );
  }
  if (map.timeout !== undefined) {
    limits.timeoutMs = parseDuration(map.timeout);
    if (limits.timeoutMs === null)
      report('limits.timeout', `timeout ${JSON.stringify(map.timeout)} is not a duration`, durationFix);
  }
  return limits;
}

function checkNameList(
  value: unknown,
  path: string,
  valid: (name: string) => boolean,
  what: string,
  report: Report,
): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    report(path, `${path} is ${describeValue(value)}, not a list`, `write a list of ${what}, e.g. ${path}: [a, b].`);
    return [];
  }
  const names: string[] = [];
  value.forEach((name, index) => {
    if (typeof name !== 'string' || !valid(name))
      report(`${path}[${index}]`, `${JSON.stringify(name)} is not one of the ${what}`, `list only ${what}.`);
    else if (names.includes(name)) report(`${path}[${index}]`, `${name} is listed twice`, 'list each name once.');
    else names.push(name);
  });
  return names;
}
