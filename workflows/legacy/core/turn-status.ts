export const turnStatuses = ['running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export type TurnStatus = (typeof turnStatuses)[number];

export const terminalStatuses: ReadonlySet<TurnStatus> = new Set(['completed', 'failed', 'cancelled']);
