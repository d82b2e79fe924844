// CI's ratio check (`npm run bench:check`, under 2 minutes): svc's `hello` beside the bare 1-commit route,
// short phases. It fails only when a ratio falls below half its target (issue 24), never on a time.
import { fmtRatio } from './support.js';
import { measureSvcAndBare, ratiosOf, TARGETS } from './workflows.js';

async function main(): Promise<void> {
  const ratios = ratiosOf(await measureSvcAndBare());
  const checks = [
    { what: 'hello 201 runs/s vs the bare route', ratio: ratios.helloVsBare, floor: TARGETS.helloVsBare / 2, higherIsBetter: true },
    { what: 'hello?wait=false completed/s vs the bare route', ratio: ratios.completedVsBare, floor: TARGETS.completedVsBare / 2, higherIsBetter: true },
    { what: 'machine CPU per run vs the bare route', ratio: ratios.cpuVsBare, floor: TARGETS.cpuVsBare * 2, higherIsBetter: false },
  ];
  let failed = 0;
  for (const check of checks) {
    const ok = check.higherIsBetter ? check.ratio >= check.floor : check.ratio <= check.floor;
    if (!ok) failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${check.what}: ${fmtRatio(check.ratio)} (fails ${check.higherIsBetter ? 'below' : 'above'} ${fmtRatio(check.floor)})`);
  }
  if (failed > 0) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
