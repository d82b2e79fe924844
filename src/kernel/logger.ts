// Structured JSON logs on stderr (pino); one root logger, children per component.
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Query parameters that carry credentials (tokens, OAuth codes and states, keys): their values never reach a log. */
const CREDENTIAL_PARAMETER = /^(?:token|access_token|refresh_token|id_token|code|state|client_secret|password|api_key|key)$/i;
const REDACTED = '[Redacted]';

/** `destination`: stderr unless given (tests collect the lines). */
export function createLogger(level: LevelWithSilent = 'info', destination: DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      level,
      base: { service: 'svc' },
      // Credentials never reach the logs (URLs: see withoutCredentials).
      redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', 'password', '*.password'],
    },
    destination,
  );
}

/**
 * A URL (absolute or a path with its query) with the values of credential-carrying query parameters
 * replaced: an OAuth callback's `code` and `state`, a redirect's `?token=`.
 *
 * @example
 * withoutCredentials('/ui?token=eyJ...&from=svc'); // '/ui?token=%5BRedacted%5D&from=svc'
 */
export function withoutCredentials(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  const names = [...new Set(query.keys())].filter((name) => CREDENTIAL_PARAMETER.test(name));
  if (names.length === 0) return url;
  for (const name of names) query.set(name, REDACTED);
  return `${url.slice(0, at)}?${query.toString()}`;
}

/** A parsed query string with the same parameters' values replaced. */
export function queryWithoutCredentials(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).map(([name, value]) => [name, CREDENTIAL_PARAMETER.test(name) ? REDACTED : value]));
}
