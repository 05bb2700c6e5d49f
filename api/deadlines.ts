/**
 * How long the API waits for a workflow to answer a query (a session's or a turn's state, a page of a turn's events):
 * a query is a task on a worker, and a worker that is busy or gone must not hold a request or a sweep for long.
 */
export const queryDeadlineMs = 5_000;

/** How long deleting a session waits for its active turn to end once asked to cancel; deletion terminates it then. */
export const cancelWaitMs = 15_000;

/** A start with `?wait=true` holds its request this much beyond the wait itself (to start the turn and answer). */
export const startBeyondWaitMs = 10_000;
