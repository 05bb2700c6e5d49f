import type { LinkGrantView } from '../../core/protocol/links';

/**
 * Who the page acts as: an API key, or an answer link (its token, to trade again when the access token it was traded
 * for runs out, and that access token). Kept for this tab only (sessionStorage, which a reload keeps and closing the
 * tab drops), never in localStorage or the address bar.
 */
export type Credential =
  | { kind: 'key'; key: string }
  | { kind: 'link'; linkToken: string; token: string; expiresAt: string; link: LinkGrantView };

const storageKey = 'skillflow.credential';

export function loadCredential(): Credential | null {
  try {
    const stored = sessionStorage.getItem(storageKey);
    return stored ? (JSON.parse(stored) as Credential) : null;
  } catch {
    return null;
  }
}

export function saveCredential(credential: Credential): void {
  sessionStorage.setItem(storageKey, JSON.stringify(credential));
}

export function forgetCredential(): void {
  sessionStorage.removeItem(storageKey);
}

/**
 * The answer link's token in the address (`/app/#link=<token>`), taken out of it at once (history.replaceState), so
 * it is neither kept in the history nor shown; undefined when the address has none.
 */
export function takeLinkFromAddress(): string | undefined {
  const match = /(?:^#|&)link=([^&]+)/.exec(location.hash);
  if (!match) return undefined;
  history.replaceState(null, '', location.pathname);
  return decodeURIComponent(match[1]);
}
