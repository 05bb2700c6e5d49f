import { useEffect, useState } from 'preact/hooks';

/** The page's places, in the address's fragment (`#/inbox`): the server serves one page for all of them. */
export type Route =
  | { view: 'home' }
  | { view: 'session'; id: string }
  | { view: 'catalog' }
  | { view: 'inbox' }
  | { view: 'report'; turnId: string };

export function routeOf(hash: string): Route {
  const [, view, id] = /^#\/([a-z]*)\/?([^/?#]*)/.exec(hash) ?? [];
  if (view === 'session' && id) return { view: 'session', id: decodeURIComponent(id) };
  if (view === 'report' && id) return { view: 'report', turnId: decodeURIComponent(id) };
  if (view === 'catalog') return { view: 'catalog' };
  if (view === 'inbox') return { view: 'inbox' };
  return { view: 'home' };
}

export const hrefOf = (route: Route): string => {
  switch (route.view) {
    case 'session':
      return `#/session/${encodeURIComponent(route.id)}`;
    case 'report':
      return `#/report/${encodeURIComponent(route.turnId)}`;
    case 'home':
      return '#/';
    default:
      return `#/${route.view}`;
  }
};

export const go = (route: Route): void => {
  location.hash = hrefOf(route);
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const changed = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}
