import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundledSkillsDir } from './deps';

/** The bundled skills and `checker`, a skill with a declared checkpoint to invoke as a skill run, in a new folder. */
export function skillsWithChecker(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.cpSync(bundledSkillsDir, dir, { recursive: true });
  fs.mkdirSync(path.join(dir, 'checker'));
  const about = 'Has a human confirm a claim. Use when a claim needs a person to vouch for it.';
  fs.writeFileSync(
    path.join(dir, 'checker', 'SKILL.md'),
    `---\nname: checker\ndescription: ${about}\n---\n\n# Checker\n\nAsk the human to confirm the claim with checkpoint confirm.\n`,
  );
  const params = '    params:\n      claim: { type: string, description: The claim to confirm. }\n';
  fs.writeFileSync(
    path.join(dir, 'checker', 'skillflow.yaml'),
    `parameters:\n  claim: { type: string, description: The claim to check. }\ncheckpoints:\n  confirm:\n    kind: approval\n${params}`,
  );
  return dir;
}
