import { useEffect, useState } from 'preact/hooks';
import {
  currentCredential,
  isLinkAuthError,
  linkProblems,
  messageOf,
  onCredential,
  signInWithLink,
  signOut,
} from './api';
import { takeLinkFromAddress, type Credential } from './credentials';
import { hrefOf, useRoute, type Route } from './router';
import { Catalog } from './views/Catalog';
import { Home } from './views/Home';
import { Inbox } from './views/Inbox';
import { ReportPage } from './views/ReportPage';
import { SessionView } from './views/SessionView';
import { SignIn } from './views/SignIn';

export function App() {
  const [credential, setCredential] = useState<Credential | null>(currentCredential);
  const [problem, setProblem] = useState<string | null>(null);
  const [opening, setOpening] = useState(false);
  const route = useRoute();
  useEffect(
    () =>
      onCredential((signed, reason) => {
        setCredential(signed);
        if (reason) setProblem(reason);
      }),
    [],
  );
  useEffect(() => {
    const linkToken = takeLinkFromAddress();
    if (!linkToken) return;
    setOpening(true);
    signInWithLink(linkToken)
      .then((signed) => {
        // Replacing the address (not adding to the history) leaves no entry of the link behind.
        if (signed.kind === 'link') location.replace(hrefOf({ view: 'session', id: signed.link.sessionId }));
      })
      .catch((err: unknown) => {
        const code = (err as { code?: string }).code;
        setProblem(isLinkAuthError(code) ? linkProblems[code] : messageOf(err));
      })
      .finally(() => setOpening(false));
  }, []);
  if (opening)
    return (
      <main id="main">
        <p role="status">Opening your link…</p>
      </main>
    );
  if (!credential) return <SignIn problem={problem} />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <span class="brand">skillflow</span>
        <nav aria-label="Main">
          {credential.kind === 'key' ? (
            <>
              <NavLink route={{ view: 'home' }} current={route} label="Conversations" />
              <NavLink route={{ view: 'catalog' }} current={route} label="Catalog" />
              <NavLink route={{ view: 'inbox' }} current={route} label="Inbox" />
            </>
          ) : (
            <NavLink route={{ view: 'session', id: credential.link.sessionId }} current={route} label="Your session" />
          )}
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <Page route={route} credential={credential} />
    </>
  );
}

function NavLink({ route, current, label }: { route: Route; current: Route; label: string }) {
  const here = hrefOf(route) === hrefOf(current);
  return (
    <a href={hrefOf(route)} aria-current={here ? 'page' : undefined}>
      {label}
    </a>
  );
}

function Page({ route, credential }: { route: Route; credential: Credential }) {
  if (credential.kind === 'link') {
    if (route.view === 'report') return <ReportPage turnId={route.turnId} />;
    // A link is for its session; an address naming another one gets the API's refusal, not that session.
    const id = route.view === 'session' ? route.id : credential.link.sessionId;
    return <SessionView key={id} id={id} credential={credential} />;
  }
  switch (route.view) {
    case 'session':
      return <SessionView key={route.id} id={route.id} credential={credential} />;
    case 'catalog':
      return <Catalog />;
    case 'inbox':
      return <Inbox />;
    case 'report':
      return <ReportPage turnId={route.turnId} />;
    case 'home':
      return <Home />;
  }
}
