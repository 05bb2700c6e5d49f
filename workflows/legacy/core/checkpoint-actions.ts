/** What a human may answer at a checkpoint, and how long a note may be (the API's schema is built from them). */
export const checkpointActions = ['approve', 'modify', 'cancel', 'choose', 'answer'] as const;
export type CheckpointAction = (typeof checkpointActions)[number];

export const maxNoteLength = 4000;
