import { HttpError } from '../errors';
import type { LinkRevocations } from './revocations';

/** How often the link of open streams is read again: for a revocation notice that was lost, and for its expiry. */
export const linkRecheckMs = 15_000;

/** Ends one open stream or socket; `code` is the reason, as the HTTP error the link's next request would get. */
type Cut = (code: string) => void;

/**
 * The SSE streams and WebSockets open in this process through answer links, by link: a revoked link's are cut when
 * the notice comes (from any API process), and every link with open streams is read again each `recheckMs`, which
 * cuts them once it no longer works (revoked, expired). A link store that cannot be read cuts nothing.
 */
export class LinkStreams {
  private readonly open = new Map<string, { cuts: Set<Cut>; timer: NodeJS.Timeout }>();
  private readonly stopListening: () => void;

  constructor(
    /** Settles when the link works; rejects with its 401 when it does not. */
    private readonly check: (linkId: string) => Promise<unknown>,
    revocations: LinkRevocations,
    private readonly recheckMs = linkRecheckMs,
  ) {
    this.stopListening = revocations.onRevoked((linkId) => this.cut(linkId, 'link_revoked'));
  }

  /** Holds a stream open through the link until the returned release; `cut` ends it when the link stops working. */
  hold(linkId: string, cut: Cut): () => void {
    let entry = this.open.get(linkId);
    if (!entry) {
      const timer = setInterval(() => void this.recheck(linkId), this.recheckMs);
      timer.unref();
      entry = { cuts: new Set(), timer };
      this.open.set(linkId, entry);
    }
    const held = entry;
    held.cuts.add(cut);
    return () => {
      held.cuts.delete(cut);
      if (held.cuts.size === 0 && this.open.get(linkId) === held) {
        clearInterval(held.timer);
        this.open.delete(linkId);
      }
    };
  }

  close(): void {
    this.stopListening();
    for (const { timer } of this.open.values()) clearInterval(timer);
    this.open.clear();
  }

  private async recheck(linkId: string): Promise<void> {
    try {
      await this.check(linkId);
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 401) this.cut(linkId, err.code);
    }
  }

  private cut(linkId: string, code: string): void {
    const entry = this.open.get(linkId);
    if (!entry) return;
    clearInterval(entry.timer);
    this.open.delete(linkId);
    for (const cut of entry.cuts) cut(code);
  }
}
