import type { SkillCatalog, SkillRef, SkillSnapshot } from './skills';
import type { ToolCatalog, ToolCatalogReference } from './tools';

/** What a turn asks for when it starts, in one activity (readTurnStart). */
export interface TurnStartRequest {
  /** Whether the turn offers registered tools (its `registeredTools` rule): the worker's tool catalog is read then. */
  tools: boolean;
  /** The tool catalog by reference (its headers: separatePatches.toolCatalogByReference), not whole. */
  toolsByReference?: boolean;
  /** The pinned skills of a carried plan to read back from the skill store (by name and hash). */
  carried: SkillRef[];
  /** The skill the turn was started with (the API's `skill`): its current version is pinned, unless a carried one of that name is read back. */
  given?: string;
}

/** A skill error a load ran into, as Temporal would carry it out of an activity: its failure type and message. */
export interface SkillLoadFailure {
  type: string;
  message: string;
}

/** Everything a turn starts with: the catalogs it keeps for its whole life, the carried skills and the given one. */
export interface TurnStart {
  catalog: SkillCatalog;
  /** Whole, or by reference when the turn asked so (`toolsByReference`). */
  tools: ToolCatalog | ToolCatalogReference;
  carried: { snapshots: SkillSnapshot[]; unavailable: SkillRef[] };
  /**
   * Absent when no skill was given, the catalog does not list it, a carried version of it was read back, or its load
   * failed with an error that is not a skill error (the turn then loads it with loadSkillSnapshot, as turns did before).
   */
  given?: { snapshot: SkillSnapshot } | { failure: SkillLoadFailure };
}
