// The shell: sign-in until there is a session, then the navigation (only what the scopes allow) and the
// pages; under /insight also the API docs.
import { useEffect, useState, type MouseEvent } from 'react';
import { Link, NavLink, Navigate, Route, Routes } from 'react-router';
import { adminAbilities } from './adminAccess.js';
import { appName, embeddedDevKey, isInsight } from './mount.js';
import { ApiDocsPage } from './pages/ApiDocs.js';
import { ApprovalsPage } from './pages/Approvals.js';
import { ArtifactsPage } from './pages/Artifacts.js';
import { AuditPage } from './pages/Audit.js';
import { IamPage } from './pages/Iam.js';
import { ModelsPage } from './pages/Models.js';
import { MorePage } from './pages/More.js';
import { RunPage } from './pages/Run.js';
import { RunsPage } from './pages/Runs.js';
import { SchedulesPage } from './pages/Schedules.js';
import { SignInPage } from './pages/SignIn.js';
import { WorkflowsPage } from './pages/Workflows.js';
import { WorkflowPage } from './pages/Workflow.js';
import { abilities, forgetToken, messageOf, openSession, signOut, storedToken, takeTokenFromUrl, type Session } from './session.js';

function useStoredSession() {
  const [session, setSession] = useState<Session | undefined>();
  const [checking, setChecking] = useState(true);
  const [problem, setProblem] = useState<string | undefined>();
  useEffect(() => {
    takeTokenFromUrl();
    // Under /insight with SVC_DEV_AUTO_LOGIN=1 the page carries the dev key.
    const token = storedToken() ?? embeddedDevKey();
    if (!token) return setChecking(false);
    openSession(token)
      .then(setSession)
      .catch((error: unknown) => {
        forgetToken();
        setProblem(`Your session ended (${messageOf(error)}): sign in again.`);
      })
      .finally(() => setChecking(false));
  }, []);
  return { session, setSession, checking, problem };
}

function Header({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const can = abilities(session.identity);
  const admin = adminAbilities(session.identity);
  return (
    <header className="top">
      <Link className="brand" to="/">
        {appName()}
      </Link>
      <nav aria-label="Main">
        <NavLink to="/workflows">Workflows</NavLink>
        {can.readRuns && <NavLink to="/runs">Runs</NavLink>}
        {can.decideApprovals && <NavLink to="/approvals">Approvals</NavLink>}
        {admin.deploymentAdmin && <NavLink to="/schedules">Schedules</NavLink>}
        {admin.readAudit && <NavLink to="/audit">Audit log</NavLink>}
        {admin.manageIam && <NavLink to="/iam">IAM</NavLink>}
        {admin.readArtifacts && <NavLink to="/artifacts">Artifacts</NavLink>}
        {admin.readModels && <NavLink to="/models">Models</NavLink>}
        {isInsight() && <NavLink to="/api-docs">API docs</NavLink>}
        <NavLink to="/more">More</NavLink>
      </nav>
      <span className="who" title={session.identity.scopes.join(' ')}>
        {session.identity.groups.join(', ') || 'signed in'}
      </span>
      <button type="button" className="secondary" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

/** The first stop of Tab: past the navigation to the page (the router would treat `#main` as a location). */
function SkipLink() {
  const skip = (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    document.getElementById('main')?.focus();
  };
  return (
    <a className="skip-link" href="#main" onClick={skip}>
      Skip to the page
    </a>
  );
}

export function App() {
  const { session, setSession, checking, problem } = useStoredSession();
  if (checking) return <p className="loading">Loading…</p>;
  if (!session) return <SignInPage problem={problem} onSignedIn={setSession} />;
  const can = abilities(session.identity);
  const end = () => {
    signOut(session);
    setSession(undefined);
  };
  return (
    <>
      <SkipLink />
      <Header session={session} onSignOut={end} />
      <main id="main" tabIndex={-1}>
        <Routes>
          <Route path="/" element={<Navigate to={can.readRuns ? '/runs' : '/workflows'} replace />} />
          <Route path="/workflows" element={<WorkflowsPage session={session} />} />
          <Route path="/workflows/:name" element={<WorkflowPage session={session} />} />
          <Route path="/runs" element={<RunsPage session={session} />} />
          <Route path="/runs/:id" element={<RunPage session={session} />} />
          <Route path="/approvals" element={<ApprovalsPage session={session} />} />
          <Route path="/schedules" element={<SchedulesPage session={session} />} />
          <Route path="/audit" element={<AuditPage session={session} />} />
          <Route path="/iam" element={<IamPage session={session} />} />
          <Route path="/artifacts" element={<ArtifactsPage session={session} />} />
          <Route path="/models" element={<ModelsPage session={session} />} />
          {isInsight() && <Route path="/api-docs" element={<ApiDocsPage />} />}
          <Route path="*" element={<MorePage />} />
        </Routes>
      </main>
    </>
  );
}
