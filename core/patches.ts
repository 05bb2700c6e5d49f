/**
 * The live patch ids of the current workflow code: the one registry (docs/operators.md, "Changing workflow code").
 *
 * A change to `workflows/` or `core/` that would change the commands of runs of the current code already in flight
 * reads `patched(livePatches.<name>.id)` where its change is, and is listed here with the date from which it may be
 * removed: a date after which no run started before the change can still be running, or an operator has moved or
 * ended them (`skillflow legacy` shows how many runs of each side are left). At most `maxLivePatches` at a time; one
 * more means a new version boundary instead. The legacy code's patch ids (workflows/legacy/core/policy/state.ts) are
 * not here: they go with it.
 */
export interface LivePatch {
  /** The id `patched()` records, in kebab case. */
  id: string;
  /** The day the change landed (YYYY-MM-DD). */
  since: string;
  /** The day from which the patch and the old behaviour may be deleted (YYYY-MM-DD). */
  removableFrom: string;
  /** What a run with the patch does that a run without it does not. */
  change: string;
}

export const maxLivePatches = 3;

export const livePatches = {} as const satisfies Record<string, LivePatch>;
