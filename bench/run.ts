// Runs the benchmarks one at a time (all, or those named), prints and records each result.
// `--no-record` leaves RESULTS.md alone; `--quick` (or BENCH_QUICK=1) shortens the HTTP benchmarks' phases.
import { appendBenchmark } from './append.js';
import { appendBatchBenchmark } from './appendBatch.js';
import { auditVerifyBenchmark } from './auditVerify.js';
import { authBenchmark } from './auth.js';
import { latencyBenchmark } from './latency.js';
import { modelsBenchmark } from './models.js';
import { rebuildBenchmark } from './rebuild.js';
import { runsSearchBenchmark } from './runsSearch.js';
import { sseBenchmark } from './sse.js';
import { sseIdleBenchmark } from './sseIdle.js';
import { timersBenchmark } from './timers.js';
import { workflowsBenchmark } from './workflows.js';
import { recordResult, RESULTS_FILE, type Benchmark } from './support.js';

const BENCHMARKS: readonly Benchmark[] = [
  appendBenchmark,
  appendBatchBenchmark,
  rebuildBenchmark,
  latencyBenchmark,
  authBenchmark,
  modelsBenchmark,
  workflowsBenchmark,
  sseBenchmark,
  sseIdleBenchmark,
  runsSearchBenchmark,
  timersBenchmark,
  auditVerifyBenchmark,
];

/** No benchmark may hang: each gets this long before the process gives up. */
const BENCH_TIMEOUT_MS = 5 * 60_000;

async function main(): Promise<void> {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  if (process.argv.includes('--list') || process.argv.includes('--help')) {
    for (const b of BENCHMARKS) console.log(`${b.name.padEnd(12)} ${b.description}`);
    return;
  }
  const unknown = names.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    throw new Error(`Unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  }
  const selected = names.length > 0 ? BENCHMARKS.filter((b) => names.includes(b.name)) : BENCHMARKS;
  const dryRun = process.argv.includes('--no-record');
  for (const benchmark of selected) {
    console.error(`== ${benchmark.name}: ${benchmark.description}`);
    const limitMs = benchmark.timeoutMs ?? BENCH_TIMEOUT_MS;
    const timer = setTimeout(() => {
      console.error(`${benchmark.name} did not finish within ${limitMs / 1000} s; giving up`);
      process.exit(2);
    }, limitMs);
    const report = await benchmark.run();
    clearTimeout(timer);
    console.log(`\n${report.markdown}\n`);
    if (!dryRun) await recordResult(benchmark.name, report.markdown);
  }
  if (!dryRun) console.error(`recorded in ${RESULTS_FILE}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
