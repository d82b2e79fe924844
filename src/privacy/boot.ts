// Opening the data keys at start: the KEK from SVC_DATA_KEY, or the database-kept fallback outside production.
import { randomBytes } from 'node:crypto';
import type { Settings } from '../config/settings.js';
import type { Queryable } from '../db/pool.js';
import type { Logger } from '../kernel/logger.js';
import { DataKeys } from './dataKeys.js';
import { fallbackKek, findFallbackKek } from './keyStore.js';

export interface DataKeySettings {
  env: Settings['env'];
  dataKeyHex: string | undefined;
  previousDataKeyHex: string | undefined;
}

/**
 * Users' email and phone are always personal; models and workflows may declare more. Production
 * with declared personal data refuses to start without SVC_DATA_KEY: the database alone must not
 * open what it stores. Elsewhere (and in production with users' data only, with a warning) the KEK
 * is generated once and kept in the database, so every process shares it and erasure still works.
 */
export async function openDataKeys(db: Queryable, settings: DataKeySettings, declaresPersonalData: boolean, logger?: Logger): Promise<DataKeys> {
  if (settings.dataKeyHex !== undefined) {
    // Keys made before SVC_DATA_KEY was set stay readable (and `svc keys rotate-data-key` rewraps them).
    const previousHex = settings.previousDataKeyHex ?? (await findFallbackKek(db));
    const previous = previousHex !== undefined ? { previous: Buffer.from(previousHex, 'hex') } : {};
    return new DataKeys(db, { current: Buffer.from(settings.dataKeyHex, 'hex'), ...previous });
  }
  if (settings.env === 'production' && declaresPersonalData) {
    throw new Error('SVC_DATA_KEY is required when SVC_ENV=production and a model or workflow declares personal data (docs/privacy.md)');
  }
  logger?.warn('SVC_DATA_KEY is not set: personal data keys are wrapped with a key kept in the database (docs/privacy.md)');
  const kek = await fallbackKek(db, randomBytes(32).toString('hex'));
  return new DataKeys(db, { current: Buffer.from(kek, 'hex') });
}
