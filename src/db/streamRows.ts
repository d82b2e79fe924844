// A query whose rows are handed over one at a time as the driver parses them, never held as a result.
import pg from 'pg';

/**
 * Runs one statement on `client` and calls `onRow` with each row as it arrives; answers the number
 * of rows. A row is garbage as soon as `onRow` is done with it, where a whole result of thousands of
 * rows, held until its last row came, outlives the young generation and is copied by every
 * garbage collection meanwhile. If `onRow` throws, the later rows are skipped and the promise
 * rejects with that error once the statement has ended (the connection stays usable).
 */
export function streamRows<R>(client: pg.ClientBase, text: string, values: unknown[], onRow: (row: R) => void, rowMode?: 'array'): Promise<number> {
  return new Promise((resolve, reject) => {
    let count = 0;
    let failure: { error: unknown } | undefined;
    const query = new pg.Query({ text, values, ...(rowMode ? { rowMode } : {}) });
    query.on('row', (row: R) => {
      if (failure) return;
      try {
        onRow(row);
        count++;
      } catch (error) {
        failure = { error };
      }
    });
    query.on('end', () => (failure ? reject(failure.error) : resolve(count)));
    query.on('error', reject);
    client.query(query);
  });
}
