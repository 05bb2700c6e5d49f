import fs from 'node:fs';
import path from 'node:path';
import { skillNameProblem, suggestSkillName } from '../core/skills/names';
import { validateSkillLibrary } from '../lib/skills';
import type { CliIo } from './io';

/** The files of a new skill: a plan with a checkpoint and one step, ready to edit (docs/skills.md explains each part). */
function files(name: string): Record<string, string> {
  return {
    'SKILL.md': `---
name: ${name}
description: Say in one or two sentences what ${name} does and when the model should use it.
metadata:
  version: "0.1.0"
  plan: "checkpoint:confirm_scope do-the-work"
---

# ${name}

Instructions for the model, in order. The plan above is enforced: the model may not skip a step or answer early.

1. Ask the human to confirm the scope with \`request_human_approval\` (checkpoint \`confirm_scope\`, kind
   \`approval\`, with the \`detail\` param). Use what they approve or modify.
2. Load the \`do-the-work\` subskill with \`load_subskill\` and follow it.
3. Answer with the result.
`,
    'skillflow.yaml': `# Engine data for ${name} (docs/skills.md, section 4).
parameters:
  topic:
    type: string
    description: What the work is about.

checkpoints:
  confirm_scope:
    kind: approval
    ttl: 30m
    on-timeout: cancel
    params:
      detail:
        type: string
        enum: [brief, thorough]
        default: brief
        description: How thorough the work should be.
`,
    'subskills/do-the-work.md': `# Do the work

Describe this step's instructions here. The model loads this file when the plan reaches the step.
`,
  };
}

/** `skillflow skills new NAME [dir]`: creates the skill folder, then validates it as `skills validate` would. */
export async function newSkill(name: string, skillsDir: string, io: CliIo): Promise<number> {
  const problem = skillNameProblem(name);
  if (problem) {
    io.stderr(`skillflow: the skill name "${name}" ${problem}; try "${suggestSkillName(name) || 'my-skill'}".\n`);
    return 2;
  }
  const folder = path.join(skillsDir, name);
  if (fs.existsSync(folder)) {
    io.stderr(
      `skillflow: ${path.relative(io.cwd, folder) || folder} already exists; pick another name or remove it.\n`,
    );
    return 1;
  }
  for (const [file, text] of Object.entries(files(name))) {
    fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    fs.writeFileSync(path.join(folder, file), text);
  }
  const report = await validateSkillLibrary(skillsDir);
  const own = report.problems.filter((p) => p.skill === name);
  const shown = path.relative(io.cwd, folder) || folder;
  if (own.some((p) => p.severity === 'error')) {
    io.stderr(
      `skillflow: created ${shown}, but it does not validate:\n${own.map((p) => `  ${p.file}: ${p.field}: ${p.message}`).join('\n')}\n`,
    );
    return 1;
  }
  io.stdout(
    `Created ${shown}: SKILL.md (front matter, plan, instructions), skillflow.yaml (parameters, a checkpoint), subskills/do-the-work.md.\nEdit them, then run: skillflow skills validate ${path.relative(io.cwd, skillsDir) || '.'}\n`,
  );
  return 0;
}
