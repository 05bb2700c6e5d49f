/** Every open SSE and WebSocket stream of this process, so shutdown can close them cleanly rather than cut them. */
export class OpenStreams {
  private readonly closers = new Set<() => void>();

  /** Registers a stream's close function; call the returned function when the stream ends on its own. */
  add(close: () => void): () => void {
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  get size(): number {
    return this.closers.size;
  }

  closeAll(): void {
    for (const close of [...this.closers]) {
      this.closers.delete(close);
      try {
        close();
      } catch {
        // Already gone.
      }
    }
  }
}
