import { checkEngineMetadata } from './engine-metadata';
import { compilePlan, canFollow } from './plan-automaton';
import { closest, sidecarFileName, subskillFolder, type ProblemList } from './problems';
import { checkSidecar, type SidecarSpec } from './sidecar';
import { checkSpecFrontmatter } from './spec-frontmatter';
import { engineToolNames } from './tool-names';
import type { PlanSpec, SkillManifest } from './types';

/** What the registry found in a skill folder, already parsed from YAML but not yet validated. */
export interface SkillFolderFacts {
  folder: string;
  frontmatter: unknown;
  /** Source text of its non-string scalars, by path (spec-frontmatter.ts ScalarSources); absent: fixes show parsed values. */
  frontmatterSources?: Record<string, string>;
  /** Parsed skillflow.yaml; undefined when the folder has none. */
  sidecar: unknown;
  subskills: string[];
  resources: string[];
}

/** Validates a skill folder's frontmatter and engine data; returns the manifest when there is no error. */
export function buildManifest(facts: SkillFolderFacts, problems: ProblemList): SkillManifest | null {
  const spec = checkSpecFrontmatter(facts.frontmatter, facts.folder, problems, facts.frontmatterSources);
  const metadata = checkEngineMetadata(spec?.metadata ?? {}, facts.subskills, problems);
  const sidecar = checkSidecar(facts.sidecar, problems);
  // A plan that was written but did not validate has its own error already: checks against it would only cascade.
  const planWritten = spec?.metadata?.plan !== undefined;
  checkAgainstPlan(sidecar, metadata.plan, planWritten, facts, problems);
  if (spec === null || problems.hasErrors) return null;
  const planCheckpoints = metadata.plan?.checkpoints ?? [];
  const { effort, ...engine } = metadata;
  return {
    ...spec,
    ...engine,
    ...(effort ? { effort } : {}),
    ...sidecar,
    checkpoints: sidecar.checkpoints.map((checkpoint) => ({
      ...checkpoint,
      inPlan: planCheckpoints.includes(checkpoint.name),
    })),
    subskills: facts.subskills,
    resources: facts.resources,
  };
}

function checkAgainstPlan(
  sidecar: SidecarSpec,
  plan: PlanSpec | null,
  planWritten: boolean,
  facts: SkillFolderFacts,
  problems: ProblemList,
): void {
  const error = (field: string, message: string, fix: string) => problems.error(sidecarFileName, field, message, fix);
  const automaton = plan ? compilePlan(plan.root) : null;
  sidecar.deadlines.forEach((deadline, index) => {
    const path = `deadlines[${index}]`;
    if (!plan && planWritten) return;
    if (!plan || !automaton) {
      error(path, 'a deadline needs a plan to jump in', 'add metadata.plan to SKILL.md, or remove the deadline.');
      return;
    }
    if (!plan.steps.includes(deadline.jumpTo)) {
      error(
        `${path}.jump-to`,
        `jump-to "${deadline.jumpTo}" is not a step of the plan`,
        `name one of the plan's steps: ${plan.steps.join(', ') || '(the plan has none)'}.`,
      );
      return;
    }
    if (deadline.source.kind !== 'param') return;
    const { checkpoint, param } = deadline.source;
    if (!plan.checkpoints.includes(checkpoint)) {
      error(
        `${path}.from`,
        `checkpoint "${checkpoint}" is not in the plan`,
        'take the deadline from a checkpoint the plan names, so it is always approved before the clock starts.',
      );
      return;
    }
    const declared = sidecar.checkpoints.find((c) => c.name === checkpoint)?.params.find((p) => p.name === param);
    if (!declared || (declared.type !== 'number' && declared.type !== 'integer')) {
      error(
        `${path}.from`,
        declared
          ? `param ${checkpoint}.${param} is ${declared.type}, not a number`
          : `checkpoint ${checkpoint} declares no param ${param}`,
        `declare it under checkpoints.${checkpoint}.params with type integer (or number).`,
      );
      return;
    }
    if (!canFollow(automaton, { kind: 'checkpoint', name: checkpoint }, { kind: 'step', name: deadline.jumpTo })) {
      error(
        `${path}.jump-to`,
        `step "${deadline.jumpTo}" never comes after checkpoint ${checkpoint} in the plan`,
        'jump to a step that follows the checkpoint the deadline starts from.',
      );
    }
  });
  for (const limit of sidecar.stepLimits) {
    if (facts.subskills.includes(limit.step)) continue;
    const near = closest(limit.step, facts.subskills);
    error(
      `steps.${limit.step}`,
      `"${limit.step}" is not a subskill of this skill`,
      near ? `did you mean "${near}"?` : `name a file of ${subskillFolder}/ without .md.`,
    );
  }
  if (sidecar.children.includes(facts.folder)) {
    error('children', `the skill lists itself as a child`, 'remove it; a skill cannot nest inside itself.');
  }
  for (const tool of sidecar.tools ?? []) {
    if (engineToolNames.includes(tool)) {
      problems.warning(
        sidecarFileName,
        'tools',
        `${tool} is an engine tool, offered in every turn anyway`,
        `remove ${tool} from tools.`,
      );
    }
  }
}
