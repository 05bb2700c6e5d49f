import { canonicalSkillName } from './names';
import { publicErrorOf } from '../errors';
import { fieldsToJsonSchema } from './json-schema';
import { formatPlan, type PlanSymbol } from './plan-ast';
import { compilePlan, allowedNext, startPlan } from './plan-automaton';
import { closest } from './problems';
import { checkResourcePath, reservedPathReason } from './resource-path';
import { humanApprovalToolName, SkillToolName } from './tool-names';
import type { ReadSkillResourceInput, SkillManifest, SkillResource, SkillSnapshot } from './types';

/**
 * Tool handlers as pure functions over data the turn already holds. Anything that needs I/O is split in two: a
 * `prepare` step that validates and says what to fetch, and a result step that formats what was fetched.
 */
export interface ToolResult {
  isError: boolean;
  content: string;
}

/** The skills a turn has loaded, pinned: a skill edited on disk later never changes them. Plain JSON. */
export interface SkillTurnState {
  loaded: Record<string, SkillSnapshot>;
  /** Names in load order; the last is the default skill of read_file. */
  loadOrder: string[];
}

export const emptySkillTurnState = (): SkillTurnState => ({ loaded: {}, loadOrder: [] });

export const toolError = (content: string): ToolResult => ({ isError: true, content });
const toolOk = (content: string): ToolResult => ({ isError: false, content });

type Input = { ok: true; values: Record<string, string | undefined> } | { ok: false; result: ToolResult };

/** Strict input check: an object with the given string fields and nothing else. */
export function readToolInput(tool: string, input: unknown, required: string[], optional: string[] = []): Input {
  const usage = `${tool} takes {${[...required.map((k) => `"${k}"`), ...optional.map((k) => `"${k}"?`)].join(', ')}}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, result: toolError(`Invalid input: ${usage}.`) };
  const record = input as Record<string, unknown>;
  const extra = Object.keys(record).filter((k) => !required.includes(k) && !optional.includes(k));
  if (extra.length > 0)
    return { ok: false, result: toolError(`Unknown field ${extra.map((k) => `"${k}"`).join(', ')}: ${usage}.`) };
  const values: Record<string, string | undefined> = {};
  for (const key of [...required, ...optional]) {
    const value = record[key];
    if (value === undefined && optional.includes(key)) continue;
    if (typeof value !== 'string')
      return { ok: false, result: toolError(`Field "${key}" must be a string: ${usage}.`) };
    values[key] = value;
  }
  return { ok: true, values };
}

export type LoadSkillStep =
  { kind: 'done'; result: ToolResult; snapshot?: SkillSnapshot } | { kind: 'fetch'; name: string };

export function prepareLoadSkill(input: unknown, skills: SkillManifest[], state: SkillTurnState): LoadSkillStep {
  const read = readToolInput(SkillToolName.loadSkill, input, ['name']);
  if (!read.ok) return { kind: 'done', result: read.result };
  const name = canonicalSkillName(read.values.name as string);
  const pinned = state.loaded[name];
  if (pinned) return { kind: 'done', result: loadSkillResult(pinned), snapshot: pinned };
  if (!skills.some((s) => s.name === name))
    return {
      kind: 'done',
      result: toolError(
        unknownSkill(
          name,
          skills.map((s) => s.name),
        ),
      ),
    };
  return { kind: 'fetch', name };
}

function unknownSkill(name: string, known: string[]): string {
  const near = closest(name, known);
  return `No skill named "${name}".${near ? ` Did you mean "${near}"?` : ''} Known skills: ${known.join(', ') || 'none'}. Call ${SkillToolName.listSkills} to see them.`;
}

/** Adds a freshly fetched snapshot to the turn's pinned skills. */
export function pinSkill(state: SkillTurnState, snapshot: SkillSnapshot): SkillTurnState {
  return {
    loaded: { ...state.loaded, [snapshot.name]: snapshot },
    loadOrder: [...state.loadOrder.filter((n) => n !== snapshot.name), snapshot.name],
  };
}

function describeSymbol(symbol: PlanSymbol, skill: string): string {
  return symbol.kind === 'checkpoint'
    ? `checkpoint ${symbol.name} (call ${humanApprovalToolName} with checkpoint "${symbol.name}")`
    : `step ${symbol.name} (call ${SkillToolName.loadSubskill} with skill "${skill}" and subskill "${symbol.name}")`;
}

/** The plan's steps allowed at the start, for skills loaded before the orchestrator has advanced anything. */
export function initialAllowedNext(manifest: SkillManifest): PlanSymbol[] {
  if (!manifest.plan) return [];
  const automaton = compilePlan(manifest.plan.root);
  return allowedNext(automaton, startPlan(automaton));
}

/** load_skill's result: the body, the names of subskills and resources, and what the plan allows next. */
export function loadSkillResult(
  snapshot: SkillSnapshot,
  next: PlanSymbol[] = initialAllowedNext(snapshot.manifest),
): ToolResult {
  const { manifest } = snapshot;
  const lines = [
    `Skill ${snapshot.name}${manifest.version ? ` (version ${manifest.version})` : ''} is loaded. Follow its instructions.`,
    '',
    snapshot.body,
    '',
    '---',
  ];
  lines.push(
    manifest.subskills.length > 0
      ? `Subskills (load each with ${SkillToolName.loadSubskill} when the instructions reach it): ${manifest.subskills.join(', ')}`
      : 'Subskills: none',
  );
  lines.push(
    manifest.resources.length > 0
      ? `Resources (read with ${SkillToolName.readFile}): ${manifest.resources.join(', ')}`
      : 'Resources: none',
  );
  if (manifest.plan) {
    lines.push(`Plan: ${formatPlan(manifest.plan.root)}`);
    lines.push(
      next.length > 0
        ? `Allowed next: ${next.map((s) => describeSymbol(s, snapshot.name)).join('; or ')}`
        : 'Allowed next: the plan is complete.',
    );
    lines.push('Checkpoints the plan does not name (such as individual questions) may be requested at any time.');
  } else {
    lines.push('Plan: none declared; follow the instructions in order.');
  }
  if (manifest.parameters.length > 0)
    lines.push(`Parameters: ${JSON.stringify(fieldsToJsonSchema(manifest.parameters))}`);
  if (manifest.output.length > 0) lines.push(`Output schema: ${JSON.stringify(fieldsToJsonSchema(manifest.output))}`);
  return toolOk(lines.join('\n'));
}

export function loadSubskillResult(input: unknown, state: SkillTurnState): ToolResult {
  const read = readToolInput(SkillToolName.loadSubskill, input, ['skill', 'subskill']);
  if (!read.ok) return read.result;
  const skill = read.values.skill as string;
  const subskill = read.values.subskill as string;
  const snapshot = state.loaded[skill];
  if (!snapshot)
    return toolError(
      `Skill "${skill}" is not loaded in this turn. Call ${SkillToolName.loadSkill} with name "${skill}" first.`,
    );
  const found = snapshot.subskills.find((s) => s.name === subskill);
  if (!found) {
    const names = snapshot.subskills.map((s) => s.name);
    const near = closest(subskill.replace(/^subskills\//, '').replace(/\.md$/, ''), names);
    return toolError(
      `Skill ${skill} has no subskill "${subskill}".${near ? ` Did you mean "${near}"?` : ''} Its subskills: ${names.join(', ') || 'none'}.`,
    );
  }
  return toolOk(`Subskill ${found.name} of skill ${skill}. Follow these instructions for this step.\n\n${found.body}`);
}

export type ReadFileStep = { kind: 'done'; result: ToolResult } | { kind: 'fetch'; request: ReadSkillResourceInput };

export function prepareReadFile(input: unknown, state: SkillTurnState): ReadFileStep {
  const done = (content: string): ReadFileStep => ({ kind: 'done', result: toolError(content) });
  const read = readToolInput(SkillToolName.readFile, input, ['path'], ['skill']);
  if (!read.ok) return { kind: 'done', result: read.result };
  const skill = read.values.skill ?? state.loadOrder[state.loadOrder.length - 1];
  if (skill === undefined)
    return done(
      `No skill is loaded in this turn. Call ${SkillToolName.loadSkill} first; read_file serves the files of loaded skills.`,
    );
  const snapshot = state.loaded[skill];
  if (!snapshot)
    return done(
      `Skill "${skill}" is not loaded in this turn. Call ${SkillToolName.loadSkill} with name "${skill}" first.`,
    );
  const checked = checkResourcePath(read.values.path as string);
  if (!checked.ok) return done(`Refused path ${JSON.stringify(read.values.path)}: ${checked.reason}.`);
  const reserved = reservedPathReason(checked.path);
  if (reserved) return done(`Refused path ${JSON.stringify(checked.path)}: ${reserved}.`);
  if (!snapshot.manifest.resources.includes(checked.path)) {
    const listed = snapshot.manifest.resources;
    return done(
      `${JSON.stringify(checked.path)} is not a resource of skill ${skill}. Its resources: ${listed.length > 0 ? listed.join(', ') : 'none'}.`,
    );
  }
  return { kind: 'fetch', request: { name: skill, hash: snapshot.hash, path: checked.path } };
}

export function readFileResult(resource: SkillResource): ToolResult {
  return toolOk(resource.content);
}

export function listSkillsResult(input: unknown, skills: SkillManifest[]): ToolResult {
  const read = readToolInput(SkillToolName.listSkills, input ?? {}, [], ['category']);
  if (!read.ok) return read.result;
  const category = read.values.category;
  const chosen = category === undefined ? skills : skills.filter((s) => s.category === category);
  const listed = chosen.map((s) => ({
    name: s.name,
    description: s.description,
    category: s.category,
    parameters: fieldsToJsonSchema(s.parameters),
  }));
  return toolOk(JSON.stringify({ skills: listed, count: listed.length, category: category ?? null }, null, 2));
}

/**
 * What the model may read of an error: a typed error's message (a skill error says what is wrong and what to do),
 * anything else the generic internal error; its detail goes to the log (workflows/internal-errors.ts).
 */
export function describeError(error: unknown): string {
  return publicErrorOf(error).message;
}
