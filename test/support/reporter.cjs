// Mocha's spec reporter plus what CI can read at the end: the slowest test files (to keep the suite
// within its time budget) and one closing line "tests: N passed, N failed, N skipped".
'use strict';
const Mocha = require('mocha');
const path = require('node:path');

const SLOWEST_FILES_SHOWN = 15;

/**
 * Serial runs time each file's top suite, hooks included. In parallel mode the reporter hears a
 * file's events only once the file has ended and suites do not name their file, so there it adds
 * up the durations of each file's tests (hooks, such as starting services, not counted).
 */
class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const wallMs = new Map();
    const testMs = new Map();
    const started = new Map();
    const add = (totals, file, ms) => totals.set(path.relative(process.cwd(), file), (totals.get(path.relative(process.cwd(), file)) ?? 0) + ms);
    const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END, EVENT_RUN_END } = Mocha.Runner.constants;
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent?.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const begun = started.get(suite);
      if (begun !== undefined) add(wallMs, suite.file, Date.now() - begun);
    });
    runner.on(EVENT_TEST_END, (test) => {
      if (test.file && typeof test.duration === 'number') add(testMs, test.file, test.duration);
    });
    runner.once(EVENT_RUN_END, () => {
      const [totals, heading] = wallMs.size > 0 ? [wallMs, 'slowest test files'] : [testMs, 'slowest test files (their tests only, hooks not counted)'];
      const slowest = [...totals].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_FILES_SHOWN);
      process.stdout.write(`\n${heading}:\n`);
      for (const [file, ms] of slowest) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}\n`);
      const { passes, failures, pending } = runner.stats;
      process.stdout.write(`\ntests: ${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = SpecWithSummary;
