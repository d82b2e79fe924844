// Sign-in: email (or phone) and password (POST /auth/token), or one of the providers GET /auth/providers lists.
import { useEffect, useState, type FormEvent } from 'react';
import { SvcAuth, type SignInProvider } from '../../../src/client/index.js';
import { baseUrl, messageOf, signInWithPassword, type Session } from '../session.js';

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

export function SignInPage({ problem, onSignedIn }: { problem: string | undefined; onSignedIn: (session: Session) => void }) {
  const [error, setError] = useState<string | undefined>(problem);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signInWithPassword(String(form.get('username')), String(form.get('password'))));
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  return (
    <main id="main" className="signin">
      <h1>svc console</h1>
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h2 id="signin-title">Sign in</h2>
        <label htmlFor="username">Email or phone number</label>
        <input id="username" name="username" autoComplete="username" required />
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <Providers />
    </main>
  );
}
