// Structured JSON logs on stderr (pino); one root logger, children per component.
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export function createLogger(level: LevelWithSilent = 'info'): Logger {
  return pino(
    {
      level,
      base: { service: 'svc' },
      // Credentials never reach the logs.
      redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', 'password', '*.password'],
    },
    pino.destination(2),
  );
}
