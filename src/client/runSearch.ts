// Run search for SvcClient: GET /api/runs filters, one page with its X-Next-Cursor, and every page in turn.
import type { RunDescriptor, RunStatus } from '../contract/types.js';
import { SvcRequestError } from './errors.js';
import { queryOf, readBody, type HttpCore } from './http.js';

export interface RunSearch {
  workflow?: string;
  /** One status or several (any of them). */
  status?: RunStatus | RunStatus[];
  /** Runs created strictly after / before this time. */
  createdAfter?: string | Date;
  createdBefore?: string | Date;
  /** Only the children of this run. */
  parentRunId?: string;
  /** Runs per page: 1 to 1000 (default 100). */
  limit?: number;
  offset?: number;
  /** A page's `nextCursor`: the page after it. */
  cursor?: string;
}

export interface RunPage {
  runs: RunDescriptor[];
  /** The cursor of the next page; undefined on the last one. */
  nextCursor: string | undefined;
}

function searchPath(search: RunSearch): string {
  return `/api/runs${queryOf({
    workflow: search.workflow,
    status: Array.isArray(search.status) ? search.status.join(',') : search.status,
    created_after: search.createdAfter,
    created_before: search.createdBefore,
    parent_run_id: search.parentRunId,
    limit: search.limit,
    offset: search.offset,
    cursor: search.cursor,
  })}`;
}

/**
 * One page of runs the caller may read, newest first.
 * @example const { runs, nextCursor } = await fetchRunPage(http, { status: ['failed'], limit: 50 });
 */
export async function fetchRunPage(http: HttpCore, search: RunSearch): Promise<RunPage> {
  const response = await http.send(searchPath(search));
  if (!response.ok) throw new SvcRequestError(response.status, await readBody(response));
  return { runs: (await response.json()) as RunDescriptor[], nextCursor: response.headers.get('x-next-cursor') ?? undefined };
}

/**
 * Every matching run, page after page by cursor: none skipped or repeated while runs are created
 * meanwhile (those newer than the first page are not included). `offset` applies to the first page.
 */
export async function* iterateRuns(http: HttpCore, search: RunSearch): AsyncGenerator<RunDescriptor> {
  for (let page = await fetchRunPage(http, search); ;) {
    yield* page.runs;
    if (page.nextCursor === undefined) return;
    page = await fetchRunPage(http, { ...search, offset: undefined, cursor: page.nextCursor });
  }
}
