/** Who sent a request: the API key's owner, or the holder of a stream token. */
export interface Caller {
  id: string;
  operator: boolean;
  /** Set when the caller came with a stream token (`?token=`) rather than an API key. */
  token?: { scope: 'read' | 'write'; expiresAt: number };
}
