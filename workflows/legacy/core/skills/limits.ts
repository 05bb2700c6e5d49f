/**
 * Size caps. A snapshot travels through workflow history (Temporal warns at 512 KiB per payload, fails at 2 MiB),
 * and every byte served ends up in the model's context.
 */
export const skillLimits = {
  /** SKILL.md, frontmatter and body together: advised (a warning beyond; the spec sets no limit, and `snapshotBytes` is the hard one). */
  skillFileBytes: 64 * 1024,
  /** The frontmatter block of SKILL.md (all the registry reads at start-up). */
  frontmatterBytes: 16 * 1024,
  sidecarBytes: 32 * 1024,
  /** Advised, as `skillFileBytes`. */
  subskillBytes: 64 * 1024,
  subskillCount: 32,
  /** SKILL.md and subskills together: the text a snapshot carries. */
  snapshotBytes: 256 * 1024,
  resourceBytes: 128 * 1024,
  resourceCount: 100,
  /** Folder levels below the skill folder that are searched for resources. */
  folderDepth: 4,
  /** The spec asks for bodies under about 500 lines; longer ones draw a warning. */
  bodyLines: 500,
} as const;

export type SkillSizeLimits = { [K in keyof typeof skillLimits]: number };

export function formatBytes(bytes: number): string {
  return bytes >= 1024 && bytes % 1024 === 0
    ? `${bytes / 1024} KiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} bytes`;
}
