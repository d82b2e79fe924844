// Security headers (helmet): one set on every answer, a page set for the HTML pages (/docs, /redoc), and
// the console's (/console, and /insight in dev mode).
import type { RequestHandler } from 'express';
import helmet, { contentSecurityPolicy, referrerPolicy, xFrameOptions } from 'helmet';

/**
 * Every answer: `X-Content-Type-Options: nosniff`, a CSP under which an API answer opened as a page
 * loads and runs nothing and is framed by nobody, and helmet's other defaults. Two are left out:
 * HSTS belongs to the TLS terminator in front of svc (helmet's `includeSubDomains` would bind sibling
 * hosts), and `Referrer-Policy` is set where a URL carries a secret (the OAuth redirect) and on pages.
 */
export const apiSecurityHeaders: RequestHandler = helmet({
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  xFrameOptions: { action: 'deny' },
  strictTransportSecurity: false,
  referrerPolicy: false,
});

const pagePolicy = contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    // Scripts come only from files the service serves: no inline script, no eval.
    scriptSrc: ["'self'"],
    // Swagger UI and ReDoc (styled-components) write style elements and attributes at run time.
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    // ReDoc's search index runs in a worker it builds from a blob.
    workerSrc: ["'self'", 'blob:'],
    frameSrc: ["'none'"],
    // The console under /insight shows /docs in a frame.
    frameAncestors: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
  },
});
const sameOriginFrames = xFrameOptions({ action: 'sameorigin' });
const noReferrer = referrerPolicy({ policy: 'no-referrer' });

/** Pages that may hold a secret (the dev key) or change with every build: never cached. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** The HTML pages and their files: the page CSP over the API one, framed only by the service itself. */
export const pageSecurityHeaders: RequestHandler[] = [pagePolicy, sameOriginFrames, noReferrer];

/**
 * The console (/console): stricter than the docs pages. Its scripts and styles are files it serves
 * (no inline style element or attribute; React sets styles through the CSSOM, which CSP allows), it
 * talks to the service only, and no page frames it. `frameSrc` is what it may frame itself.
 */
const consolePolicy = (frameSrc: string) =>
  contentSecurityPolicy({
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      frameSrc: [frameSrc],
      frameAncestors: ["'none'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
    },
  });

export const consoleSecurityHeaders: RequestHandler[] = [consolePolicy("'none'"), xFrameOptions({ action: 'deny' }), noReferrer];

/** The console under /insight (dev mode): the same, but its API docs page frames the service's own /docs. */
export const insightSecurityHeaders: RequestHandler[] = [consolePolicy("'self'"), xFrameOptions({ action: 'deny' }), noReferrer];
