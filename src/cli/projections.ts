// `svc projections status|rebuild`: a table of read models, and rebuilds with a progress bar on a terminal.
import { SingleBar, Presets } from 'cli-progress';
import type { Pool } from '../db/pool.js';
import { NotFoundError } from '../kernel/errors.js';
import { projectionStatus, rebuildProjection, type ProjectionRegistry } from '../projections/index.js';

export async function printProjectionStatus(pool: Pool, registry: ProjectionRegistry): Promise<void> {
  const rows = await projectionStatus(pool, registry);
  if (rows.length === 0) {
    process.stdout.write('no projections registered\n');
    return;
  }
  const lines = rows.map((r) => [
    r.name,
    r.table,
    String(r.version),
    String(r.storedVersion ?? '-'),
    r.isCurrent ? 'current' : 'stale',
    String(r.rows),
    r.rebuiltAt ?? '-',
  ]);
  const header = ['projection', 'table', 'version', 'built at', 'state', 'rows', 'rebuilt'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  for (const line of [header, ...lines]) process.stdout.write(`${line.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}\n`);
}

export async function rebuildWithProgress(pool: Pool, registry: ProjectionRegistry, name?: string): Promise<void> {
  const named = name === undefined ? undefined : registry.get(name);
  if (name !== undefined && !named) throw new NotFoundError(`No projection named ${name}`);
  const targets = named ? [named] : registry.list();
  if (targets.length === 0) process.stdout.write('no projections registered\n');
  for (const projection of targets) {
    const bar = process.stdout.isTTY
      ? new SingleBar({ format: `${projection.name} [{bar}] {value}/{total} events {eta}s` }, Presets.shades_classic)
      : undefined;
    bar?.start(1, 0);
    const result = await rebuildProjection(pool, registry, projection, {
      onProgress: ({ applied, total }) => {
        bar?.setTotal(Math.max(total, 1));
        bar?.update(applied);
      },
    });
    bar?.stop();
    if (result) {
      const rate = result.durationMs > 0 ? Math.round((result.events / result.durationMs) * 1000) : result.events;
      process.stdout.write(
        `${result.projection} v${result.version}: ${result.events} events -> ${result.rows} rows in ${result.durationMs} ms (${rate} events/s)\n`,
      );
    }
  }
}
