// Recomputes every stream's hash chain, walking the events table in stream order with a cursor; pages
// are hashed on threads while the next ones are read.
import { availableParallelism } from 'node:os';
import type { Queryable } from '../db/pool.js';
import { checkPage, stateAfter, WALK_START, type Broken, type PageResult } from './chainLink.js';
import { HashingThreads } from './hashingThreads.js';
import { prefetchedPages, selectChainLinks, type ChainLinkRow } from './queries.js';

export type { Broken } from './chainLink.js';

export interface WalkOptions {
  /** Rows per page. */
  pageSize?: number;
  /** Hashing threads once the log is longer than a page (0: hash on this thread). */
  threads?: number;
}

const PAGE = 5000;
/** One thread per core, at most four: the database and this thread's reading use the rest. */
const THREADS = Math.min(4, availableParallelism());

/** Walks every chain; stops at the first break in stream order. */
export async function verifyChains(client: Queryable, options: WalkOptions = {}): Promise<{ checked: number; broken: Broken | null }> {
  const pageSize = options.pageSize ?? PAGE;
  const threadCount = options.threads ?? THREADS;
  const memory = new Map<string, string>();
  const pending: Promise<PageResult>[] = [];
  let threads: HashingThreads | undefined;
  let before = WALK_START;
  let checked = 0;
  /** Takes the oldest page's result: answers the break if it has one. */
  const settleOldest = async (): Promise<Broken | null> => {
    const result = await pending.shift()!;
    checked += result.checked;
    return result.broken;
  };
  try {
    const pages = prefetchedPages(
      (cursor) => selectChainLinks(client, cursor, pageSize),
      ([streamId, streamPosition]: ChainLinkRow) => ({ streamId, streamPosition }),
    );
    for await (const rows of pages) {
      const job = { rows, before };
      before = stateAfter(rows);
      // A log of one page is hashed here: starting threads would cost more than they save.
      if (!threads && threadCount > 0 && rows.length === pageSize) threads = new HashingThreads(threadCount);
      pending.push(threads ? threads.check(job) : Promise.resolve(checkPage(job, memory)));
      // Pages in flight are bounded: a few per thread keep them busy while memory stays flat.
      while (pending.length > 2 * Math.max(1, threadCount)) {
        const broken = await settleOldest();
        if (broken) return { checked, broken };
      }
    }
    while (pending.length > 0) {
      const broken = await settleOldest();
      if (broken) return { checked, broken };
    }
    return { checked, broken: null };
  } finally {
    // A break returns early: the later pages' results are not needed.
    pending.forEach((p) => p.catch(() => undefined));
    await threads?.close();
  }
}
