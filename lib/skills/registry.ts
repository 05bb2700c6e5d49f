import path from 'node:path';
import {
  checkResourcePath,
  canonicalSkillName,
  isSkillName,
  reservedPathReason,
  settleLibrary,
  skillLimits,
  SkillNotFoundError,
  SkillResourceError,
  SkillValidationError,
  SkillVersionUnavailableError,
  type ReadSkillResourceInput,
  type SkillCatalog,
  type SkillManifest,
  type SkillProblem,
  type SkillResource,
  type SkillSizeLimits,
  type SkillRef,
  type SkillSnapshot,
} from '../../core/skills';
import { nodeSkillFileReader, type SkillFileReader } from './reader';
import { scanSkill, type ScanDeps, type SkillScan } from './scan-skill';
import { readSkillContent } from './skill-content';
import { findSkillFolders } from './skill-folders';
import { SkillStore } from './skill-store';

export interface SkillRegistryOptions {
  skillsDir: string;
  /** Where pinned versions are copied (`<dataDir>/skill-store`). */
  storeDir: string;
  reader?: SkillFileReader;
  limits?: Partial<SkillSizeLimits>;
}

/**
 * The skill library on disk. `catalog()` re-lists the skills directory on every call (directory listings and
 * stats only) and re-reads the front matter of a skill only when its files changed, so skills added, edited or
 * disabled reach new turns without a restart. Bodies, subskills and resources are read by `snapshot()` alone.
 */
export class SkillRegistry {
  readonly store: SkillStore;
  private readonly deps: ScanDeps;
  private readonly scans = new Map<string, SkillScan>();
  private readonly snapshots = new Map<string, { fingerprint: string; snapshot: SkillSnapshot }>();

  constructor(options: SkillRegistryOptions) {
    this.deps = {
      skillsDir: path.resolve(options.skillsDir),
      reader: options.reader ?? nodeSkillFileReader,
      limits: { ...skillLimits, ...options.limits },
    };
    this.store = new SkillStore(path.resolve(options.storeDir));
  }

  async catalog(): Promise<SkillCatalog> {
    const { folders, problems } = await findSkillFolders(this.deps.skillsDir);
    const scans: SkillScan[] = [];
    for (const folder of folders) scans.push(await this.scan(folder));
    for (const gone of [...this.scans.keys()].filter((folder) => !folders.includes(folder))) this.scans.delete(gone);

    const valid = scans.flatMap((scan) => (scan.manifest ? [scan.manifest] : []));
    const settled = settleLibrary(valid);
    const all = [...problems, ...scans.flatMap((scan) => scan.problems.problems), ...settled.problems];
    return {
      skills: settled.valid.filter((m) => m.enabled),
      disabled: settled.valid.filter((m) => !m.enabled).map((m) => m.name),
      problems: all.sort(byFile),
    };
  }

  private async scan(folder: string): Promise<SkillScan> {
    const fresh = await scanSkill(folder, this.deps, this.scans.get(folder));
    this.scans.set(folder, fresh);
    return fresh;
  }

  /** Reads, validates, hashes and pins the current version of a skill of the catalog. */
  async snapshot(requested: string): Promise<SkillSnapshot> {
    const name = canonicalSkillName(requested);
    await this.catalogEntry(name);
    const folder = this.folderOf(name);
    const cached = this.snapshots.get(name);
    const listed = this.scans.get(folder)?.listing.fingerprint;
    if (cached && cached.fingerprint === listed && (await this.store.snapshot(cached.snapshot.hash)))
      return cached.snapshot;
    const content = await readSkillContent(folder, this.deps);
    const errors = content.problems.problems.filter((p) => p.severity === 'error');
    if (errors.length > 0 || !content.manifest) throw new SkillValidationError(errors);
    if (!content.manifest.enabled)
      throw new SkillNotFoundError(
        `Skill "${name}" is disabled.`,
        'enable it (metadata.enabled: "true") or use another skill.',
      );
    const snapshot: SkillSnapshot = {
      name,
      hash: content.hash,
      manifest: content.manifest,
      body: content.body,
      subskills: content.subskills,
    };
    await this.store.put({ name, hash: content.hash, resources: content.manifest.resources }, content.files);
    await this.store.putSnapshot(snapshot);
    this.snapshots.set(name, { fingerprint: content.fingerprint, snapshot });
    return snapshot;
  }

  /** The folder of the skill of this (NFKC) name: a folder written otherwise (NFD, fullwidth) still names it. */
  private folderOf(name: string): string {
    for (const [folder, scan] of this.scans) if (scan.manifest?.name === name) return folder;
    return name;
  }

  private async catalogEntry(name: string): Promise<SkillManifest> {
    if (!isSkillName(name))
      throw new SkillNotFoundError(`"${name}" is not a skill name.`, 'call list_skills to see the available skills.');
    const catalog = await this.catalog();
    const manifest = catalog.skills.find((m) => m.name === name);
    if (manifest) return manifest;
    if (catalog.disabled.includes(name))
      throw new SkillNotFoundError(
        `Skill "${name}" is disabled.`,
        'enable it (metadata.enabled: "true") or use another skill.',
      );
    const errors = catalog.problems.filter((p) => p.skill === name && p.severity === 'error');
    if (errors.length > 0) throw new SkillValidationError(errors);
    throw new SkillNotFoundError(`There is no skill "${name}".`, 'call list_skills to see the available skills.');
  }

  /**
   * A pinned version read back by reference (a turn continuing a carried plan): from the skill store, or the current
   * version when it is the same one (a worker that never pinned it). Null when neither has it.
   */
  async pinnedSnapshot(ref: SkillRef): Promise<SkillSnapshot | null> {
    const stored = await this.store.snapshot(ref.hash);
    if (stored) return stored.name === ref.name ? stored : null;
    if (!isSkillName(ref.name)) return null;
    const current = await this.snapshot(ref.name).catch(() => null);
    return current?.hash === ref.hash ? current : null;
  }

  /** Serves a resource of exactly the pinned version, from the skill store. */
  async readResource(input: ReadSkillResourceInput): Promise<SkillResource> {
    const { name, hash } = input;
    const checked = checkResourcePath(input.path);
    if (!checked.ok)
      throw new SkillResourceError(
        `Refused path ${JSON.stringify(input.path)}: ${checked.reason}.`,
        'give the path exactly as load_skill listed it.',
      );
    const reserved = reservedPathReason(checked.path);
    if (reserved)
      throw new SkillResourceError(
        `Refused path ${JSON.stringify(checked.path)}: ${reserved}.`,
        'read only the resources load_skill listed.',
      );
    let pin = await this.store.pin(hash);
    if (!pin && isSkillName(name)) {
      const current = await this.snapshot(name).catch(() => null);
      if (current?.hash === hash) pin = await this.store.pin(hash);
    }
    if (!pin || pin.name !== name) {
      throw new SkillVersionUnavailableError(
        `The pinned version ${hash.slice(0, 12)} of skill "${name}" is no longer available.`,
        'start a new turn to load the current version.',
      );
    }
    if (!pin.resources.includes(checked.path)) {
      throw new SkillResourceError(
        `${JSON.stringify(checked.path)} is not a resource of skill ${name}.`,
        `read one of: ${pin.resources.join(', ') || '(none)'}.`,
      );
    }
    const bytes = await this.store.readFile(hash, checked.path, this.deps.limits.resourceBytes);
    let content: string;
    try {
      content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new SkillResourceError(
        `${checked.path} is a binary file; read_file serves text only.`,
        'read a text resource instead.',
      );
    }
    return { name, hash, path: checked.path, content };
  }
}

function byFile(a: SkillProblem, b: SkillProblem): number {
  return a.file === b.file ? 0 : a.file < b.file ? -1 : 1;
}
