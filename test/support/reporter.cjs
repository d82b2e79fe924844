// Mocha's spec reporter plus what CI can read at the end: the slowest test files (to keep the suite
// within its time budget) and one closing line "tests: N passed, N failed, N skipped".
'use strict';
const Mocha = require('mocha');
const path = require('node:path');

const SLOWEST_FILES_SHOWN = 15;

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const fileMs = new Map();
    const started = new Map();
    const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent?.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const begun = started.get(suite);
      if (begun === undefined) return;
      const file = path.relative(process.cwd(), suite.file);
      fileMs.set(file, (fileMs.get(file) ?? 0) + Date.now() - begun);
    });
    runner.once(EVENT_RUN_END, () => {
      const slowest = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_FILES_SHOWN);
      process.stdout.write(`\nslowest test files:\n`);
      for (const [file, ms] of slowest) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}\n`);
      const { passes, failures, pending } = runner.stats;
      process.stdout.write(`\ntests: ${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = SpecWithSummary;
