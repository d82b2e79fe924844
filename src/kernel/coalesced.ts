// A task that, asked for again while it runs, runs once more after it instead of twice at once.

/**
 * Wraps `task` so that the calls made while it runs fold into one more run after it, with the
 * arguments of the call that started the first (wake-ups that each mean "read what is new": one
 * read after the current one sees all they announced). A failure ends the runs and rejects the call
 * that started them; the calls folded into them resolve at once.
 */
export function coalesced<A extends unknown[]>(task: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let running = false;
  let again = false;
  return async (...args) => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await task(...args);
      } while (again);
    } finally {
      running = false;
    }
  };
}
