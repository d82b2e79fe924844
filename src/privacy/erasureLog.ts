// The erasure list kept outside the database (SVC_ERASURE_LOG): written before each erasure, replayed at start.
import { appendFile, readFile } from 'node:fs/promises';
import type { EventMetadata } from '../eventstore/types.js';
import type { Logger } from '../kernel/logger.js';
import type { Queryable } from '../db/pool.js';
import { findSubjectKey } from './keyStore.js';

export type SubjectType = 'user' | 'record';
/** What erases each kind of subject: its feature appends `subject_erased` and destroys the key. */
export type Erasers = Readonly<Record<SubjectType, (id: string, metadata: EventMetadata) => Promise<void>>>;

export interface ErasureEntry {
  subject_type: SubjectType;
  id: string;
  erased_at: string;
}

/**
 * A restored database backup older than an erasure holds the erased subject's key again. The list,
 * one JSON line per erasure in a file outside the database (and outside its backups), is written
 * before the key is destroyed and replayed at every start: what it names is erased again.
 */
export class ErasureLog {
  constructor(private readonly file: string | undefined) {}

  async record(entry: ErasureEntry): Promise<void> {
    if (this.file) await appendFile(this.file, `${JSON.stringify(entry)}\n`, { encoding: 'utf8', flag: 'a' });
  }

  /**
   * Erases again every listed subject whose key is live: answers how many. A subject without a key
   * row has nothing sealed to bring back (or was listed by a request that then failed: an unknown id).
   */
  async replay(db: Queryable, erasers: Erasers, logger: Logger): Promise<number> {
    if (!this.file) return 0;
    const text = await readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? '' : Promise.reject(error)));
    let replayed = 0;
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
      const entry = JSON.parse(line) as ErasureEntry;
      const key = await findSubjectKey(db, { type: entry.subject_type, id: entry.id });
      if (!key || key.destroyed_at) continue;
      await erasers[entry.subject_type](entry.id, { actor: { type: 'system', id: 'svc' }, source: 'executor', replayed_erasure: true }).catch(
        (error: unknown) => logger.warn({ err: error, subject: entry }, 'an erasure of SVC_ERASURE_LOG could not be replayed'),
      );
      replayed++;
    }
    if (replayed > 0) logger.warn({ replayed }, 'replayed erasures from SVC_ERASURE_LOG (the database was older than them)');
    return replayed;
  }
}
