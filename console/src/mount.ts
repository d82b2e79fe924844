// Where the app is served: /console (every mode; password and OAuth sign-in) or /insight (dev mode; the
// dev key is the session). One build serves both: the base path comes from the address.

export const isInsight = (): boolean => /^\/insight(\/|$)/.test(window.location.pathname);

/** The router's base path. */
export const basename = (): string => (isInsight() ? '/insight' : '/console');

/** The app's name in headings and the tab's title. */
export const appName = (): string => (isInsight() ? 'svc insight' : 'svc console');

/** The dev key the page carries under SVC_DEV_AUTO_LOGIN=1 (its `svc-dev-key` meta tag), if any. */
export function embeddedDevKey(): string | undefined {
  return document.querySelector<HTMLMetaElement>('meta[name="svc-dev-key"]')?.content || undefined;
}
