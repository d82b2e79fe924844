// Small shared hooks: loading a value from the API with its error, and the page title.
import { useCallback, useEffect, useState } from 'react';
import { appName } from './mount.js';
import { messageOf } from './session.js';

export interface Loaded<T> {
  value: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/** Calls `load` now and whenever `deps` change or `reload` is called; a stale answer is dropped. */
export function useLoaded<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [value, setValue] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [round, setRound] = useState(0);
  // A new search shows nothing until its answer comes, never the previous one's.
  useEffect(() => setValue(undefined), deps);
  useEffect(() => {
    let isCurrent = true;
    load().then(
      (loaded) => {
        if (!isCurrent) return;
        setValue(loaded);
        setError(undefined);
      },
      (failure: unknown) => isCurrent && setError(messageOf(failure)),
    );
    return () => {
      isCurrent = false;
    };
    // The caller names what `load` depends on in `deps`.
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { value, error, reload };
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · ${appName()}`;
  }, [title]);
}

export function ErrorNote({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error}
    </p>
  );
}
