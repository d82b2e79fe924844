// Security headers (helmet): one set on every answer, a page set for the HTML pages (/docs, /redoc, /insight).
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
    // /insight shows /docs in a frame.
    frameSrc: ["'self'"],
    frameAncestors: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
  },
});
const sameOriginFrames = xFrameOptions({ action: 'sameorigin' });
const noReferrer = referrerPolicy({ policy: 'no-referrer' });

/** The HTML pages and their files: the page CSP over the API one, framed only by the service itself. */
export const pageSecurityHeaders: RequestHandler[] = [pagePolicy, sameOriginFrames, noReferrer];

/**
 * The console (/console): stricter than the docs pages. Its scripts and styles are files it serves
 * (no inline style element or attribute; React sets styles through the CSSOM, which CSP allows), it
 * talks to the service only, and no page frames it.
 */
const consolePolicy = contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'"],
    connectSrc: ["'self'"],
    frameSrc: ["'none'"],
    frameAncestors: ["'none'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
  },
});

export const consoleSecurityHeaders: RequestHandler[] = [consolePolicy, xFrameOptions({ action: 'deny' }), noReferrer];
