// What went wrong with a request svc sent out, in words for a run's journal and the log: fetch says only
// "fetch failed", the reason (a refused connection, a certificate TLS would not trust) is in its causes.

/** An error's `code` (Node's system and TLS errors carry one), if it is a string. */
const codeOf = (error: Error): string | undefined => {
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
};

/** OpenSSL's certificate verification codes as Node names them, and Node's own TLS and SSL error codes. */
const TLS_CODE = /^ERR_(TLS|SSL)_|CERT|SELF_SIGNED|^UNABLE_TO_|^INVALID_CA$|^HOSTNAME_MISMATCH$/;

/** The error and its causes, innermost last. */
export function* causesOf(error: unknown): Generator<Error> {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) yield cause;
}

/**
 * The error's message with those of its causes, and the innermost code.
 * @example
 * describeFailure(fetchError); // 'fetch failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)'
 */
export function describeFailure(error: unknown): string {
  const chain = [...causesOf(error)];
  if (chain.length === 0) return String(error);
  const messages = [...new Set(chain.map((cause) => cause.message).filter(Boolean))];
  const code = chain.map(codeOf).findLast((c) => c !== undefined);
  // openai's "Connection error." reads on into its cause: "Connection error: fetch failed: ...".
  const text = messages.map((message, i) => (i < messages.length - 1 ? message.replace(/\.$/, '') : message)).join(': ');
  return code && !text.includes(code) ? `${text} (${code})` : text;
}

/** The TLS failure behind a failed request (the peer's certificate not trusted, a handshake refused), if that is what it was. */
export function tlsFailureIn(error: unknown): { code: string; reason: string } | undefined {
  for (const cause of causesOf(error)) {
    const code = codeOf(cause);
    if (code && TLS_CODE.test(code)) return { code, reason: cause.message };
  }
  return undefined;
}

/** A URL as it may be logged: scheme, host and path; no user information, no query (either may carry a secret). */
export function loggableUrl(url: string | URL): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '[not a URL]';
  }
}
