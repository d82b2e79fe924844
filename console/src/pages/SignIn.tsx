// Sign-in: email (or phone) and password (POST /auth/token), or one of the providers GET /auth/providers
// lists; under /insight (dev mode) the dev key instead.
import { useEffect, useState, type FormEvent } from 'react';
import { SvcAuth, type SignInProvider } from '../../../src/client/index.js';
import { ErrorNote } from '../hooks.js';
import { appName, isInsight } from '../mount.js';
import { baseUrl, messageOf, openSession, signInWithPassword, type Session } from '../session.js';

function Providers() {
  const [providers, setProviders] = useState<SignInProvider[]>([]);
  useEffect(() => {
    new SvcAuth({ baseUrl: baseUrl() })
      .listProviders()
      .then(setProviders)
      .catch(() => setProviders([]));
  }, []);
  if (providers.length === 0) return null;
  return (
    <section aria-labelledby="providers-title" className="providers">
      <h2 id="providers-title">Or sign in with</h2>
      <ul>
        {providers.map((provider) => (
          <li key={provider.name}>
            <a className="button secondary" href={provider.start_url}>
              {provider.name}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The form's fields signed in with, or the reason they were refused. */
function useSignIn(problem: string | undefined, signIn: (form: FormData) => Promise<Session>, onSignedIn: (session: Session) => void) {
  const [error, setError] = useState<string | undefined>(problem);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(form));
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  return { error, busy, submit };
}

function PasswordForm({ problem, onSignedIn }: { problem: string | undefined; onSignedIn: (session: Session) => void }) {
  const { error, busy, submit } = useSignIn(problem, (form) => signInWithPassword(String(form.get('username')), String(form.get('password'))), onSignedIn);
  return (
    <form onSubmit={submit} aria-labelledby="signin-title">
      <h2 id="signin-title">Sign in</h2>
      <label htmlFor="username">Email or phone number</label>
      <input id="username" name="username" autoComplete="username" required />
      <label htmlFor="password">Password</label>
      <input id="password" name="password" type="password" autoComplete="current-password" required />
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}

/** Under /insight: the dev key (SVC_DEV_API_KEY) is the bearer token; the service checks it on GET /auth/me. */
function DevKeyForm({ problem, onSignedIn }: { problem: string | undefined; onSignedIn: (session: Session) => void }) {
  const { error, busy, submit } = useSignIn(problem, (form) => openSession(String(form.get('dev-key')).trim()), onSignedIn);
  return (
    <form onSubmit={submit} aria-labelledby="signin-title">
      <h2 id="signin-title">Sign in with the dev key</h2>
      <label htmlFor="dev-key">Dev key</label>
      <input id="dev-key" name="dev-key" type="password" autoComplete="off" placeholder="XXXX-XXXX-XXXX-XXXX" required />
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      <p className="muted">
        The key is <code>SVC_DEV_API_KEY</code>; with <code>SVC_DEV_AUTO_LOGIN=1</code> this page signs in by itself. People with an account sign in at{' '}
        <a href="/console/">/console</a>.
      </p>
    </form>
  );
}

export function SignInPage({ problem, onSignedIn }: { problem: string | undefined; onSignedIn: (session: Session) => void }) {
  return (
    <main id="main" className="signin">
      <h1>{appName()}</h1>
      {isInsight() ? (
        <DevKeyForm problem={problem} onSignedIn={onSignedIn} />
      ) : (
        <>
          <PasswordForm problem={problem} onSignedIn={onSignedIn} />
          <Providers />
        </>
      )}
    </main>
  );
}
