import { useEffect, useState } from 'preact/hooks';
import { currentCredential, messageOf, onCredential, signInWithLink, signOut } from './api';
import { takeLinkFromAddress, type Credential } from './credentials';
import { go, hrefOf, useRoute, type Route } from './router';
import { Catalog } from './views/Catalog';
import { Home } from './views/Home';
import { Inbox } from './views/Inbox';
import { ReportPage } from './views/ReportPage';
import { SessionView } from './views/SessionView';
import { SignIn } from './views/SignIn';

/** Words for the refusals of an answer link (docs/web-app.md). */
const linkProblems: Record<string, string> = {
  link_revoked: 'This link was revoked. Ask the person who sent it for a new one.',
  link_expired: 'This link has expired. Ask the person who sent it for a new one.',
  link_unknown: 'This link is not valid. Check that you opened it whole, or ask for a new one.',
};

export function App() {
  const [credential, setCredential] = useState<Credential | null>(currentCredential);
  const [problem, setProblem] = useState<string | null>(null);
  const [opening, setOpening] = useState(false);
  const route = useRoute();
  useEffect(() => onCredential(setCredential), []);
  useEffect(() => {
    const linkToken = takeLinkFromAddress();
    if (!linkToken) return;
    setOpening(true);
    signInWithLink(linkToken)
      .then((signed) => {
        if (signed.kind === 'link') go({ view: 'session', id: signed.link.sessionId });
      })
      .catch((err: unknown) => {
        const code = (err as { code?: string }).code ?? '';
        setProblem(linkProblems[code] ?? messageOf(err));
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
    return <SessionView id={credential.link.sessionId} credential={credential} />;
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
