// The `svc` command line: serve, migrate, validate, projections, runs, audit, keys (signing and data keys).
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { generateSigningKeyHex } from '../iam/keys.js';
import { loadSettings, SettingsError, type Settings } from '../config/settings.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import { backfillEventHashes } from '../eventstore/backfill.js';
import { AppError, BadRequestError } from '../kernel/errors.js';
import { rotateDataKeys } from '../privacy/rotate.js';
import { createLogger, type Logger } from '../kernel/logger.js';
import { SERVICE_VERSION } from '../kernel/version.js';
import { loadProject } from '../main.js';
import { prepareModelTables } from '../models/boot.js';
import { ProjectionRegistry } from '../projections/index.js';
import { printProjectionStatus, rebuildWithProgress } from './projections.js';
import { serve } from './serve.js';
import { validateCommand } from './validate.js';
import { exportCommand, importCommand, replayCommand, verifyExportCommand } from './runs.js';
import { verifyAuditLog } from '../audit/verify.js';
import { trustedKeys } from './audit.js';

function boot(): { settings: Settings; logger: Logger } {
  const settings = loadSettings();
  const logger = createLogger(settings.logLevel);
  for (const warning of settings.warnings) logger.warn(warning);
  return { settings, logger };
}

/** Opens the database, migrates it unless told not to, runs `work` with a pool, and closes everything again. */
async function withDatabase<T>(
  work: (pool: ReturnType<typeof createPool>, logger: Logger) => Promise<T>,
  { migrateFirst = true }: { migrateFirst?: boolean } = {},
): Promise<T> {
  const { settings, logger } = boot();
  const database = await openDatabase(settings, logger);
  const pool = createPool({ connectionString: database.url, max: 4, applicationName: 'svc-cli' });
  try {
    if (migrateFirst) {
      await migrate(pool);
      await backfillEventHashes(pool, logger);
    }
    return await work(pool, logger);
  } finally {
    await pool.end();
    await database.stop();
  }
}

const program = new Command('svc').version(SERVICE_VERSION).description('Event-sourced workflow and model service');

program
  .command('serve', { isDefault: true })
  .description('serve the HTTP API (settings from the environment and svc.yaml)')
  .action(async () => {
    const { settings, logger } = boot();
    await serve(settings, logger);
  });

program
  .command('migrate')
  .description('apply pending database migrations from db/')
  .action(() =>
    withDatabase(
      async (pool, logger) => {
        const applied = await migrate(pool);
        await backfillEventHashes(pool, logger);
        logger.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
      },
      { migrateFirst: false },
    ),
  );

program
  .command('validate')
  .description('check the project (workflows, models, runners); prints V-codes; exit 1 on errors')
  .option('--strict', 'warnings count as errors')
  .action(async (options: { strict?: boolean }) => {
    const settings = loadSettings();
    process.exitCode = await validateCommand(settings.projectDir, settings, options.strict === true);
  });

const projections = program.command('projections').description('inspect and rebuild read models');
projections
  .command('status')
  .description('list projections with their versions and row counts')
  .action(() => withDatabase(async (pool) => printProjectionStatus(pool, await projectRegistry(pool))));
projections
  .command('rebuild [name]')
  .description('replay the log into fresh tables and swap them in (all projections when no name)')
  .action((name: string | undefined) => withDatabase(async (pool) => rebuildWithProgress(pool, await projectRegistry(pool), name)));

const runs = program.command('runs').description('export, import, verify and replay runs');
runs
  .command('export <id>')
  .description('print the run (descriptor, workflow, journal) as svc.run/v1 JSON')
  .action((id: string) => withDatabase((pool) => exportCommand(pool, loadSettings().projectDir, id)));
runs
  .command('import <file>')
  .description('append an exported, finished run to this database; it reads back identically')
  .option('--resume', 'import an unfinished run too: a service on this database continues it (its remaining steps run, APICalls included)')
  .option('--jwks <url-or-file>', "public keys the export may be signed with, instead of SVC_SIGNING_KEY's")
  .option('--unverified', 'import even when the signature or the hash chain does not verify')
  .action((file: string, options: { resume?: boolean; jwks?: string; unverified?: boolean }) =>
    withDatabase((pool) =>
      importCommand(pool, loadSettings().projectDir, file, { resume: options.resume === true, jwks: options.jwks, unverified: options.unverified === true }),
    ),
  );
runs
  .command('verify <file>')
  .description("check an export offline: its signature with the public key alone, and its events' hash chain; exit 1 when it fails")
  .option('--jwks <url-or-file>', 'the public keys (a JWKS: /auth/jwks.json of the exporting service, or a file)')
  .action(async (file: string, options: { jwks?: string }) => {
    process.exitCode = await verifyExportCommand(file, options.jwks);
  });
runs
  .command('replay <id-or-file>')
  .description('re-execute a run with its recorded outside answers and decisions; prints SAME, DIFF or KEPT (Agent) per step')
  .action((target: string) =>
    withDatabase(async (pool) => {
      process.exitCode = await replayCommand(pool, loadSettings().projectDir, target);
    }),
  );

const audit = program.command('audit').description('tamper evidence: hash chains and signed checkpoints');
audit
  .command('verify')
  .description('recompute every hash chain and checkpoint; prints {ok, events_checked, checkpoints_checked, first_broken}; exit 1 when broken')
  .option('--jwks <url-or-file>', "the public keys checkpoints may be signed with, instead of SVC_SIGNING_KEY's (list old keys too after a key change)")
  .action((options: { jwks?: string }) =>
    withDatabase(async (pool) => {
      const report = await verifyAuditLog(pool, await trustedKeys(options.jwks));
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      process.exitCode = report.ok ? 0 : 1;
    }),
  );

const keys = program.command('keys').description('the signing key and the data key');
keys
  .command('generate')
  .description('print a fresh Ed25519 signing key (64 hex characters) for SVC_SIGNING_KEY')
  .action(() => {
    process.stdout.write(`${generateSigningKeyHex()}\n`);
  });
keys
  .command('generate-data-key')
  .description('print a fresh AES-256 key (64 hex characters) for SVC_DATA_KEY')
  .action(() => {
    process.stdout.write(`${randomBytes(32).toString('hex')}\n`);
  });
keys
  .command('rotate-data-key')
  .description('rewrap every personal data key with SVC_DATA_KEY (the old key in SVC_DATA_KEY_PREVIOUS); events are not touched; prints a report')
  .action(() =>
    withDatabase(async (pool) => {
      const settings = loadSettings();
      if (!settings.dataKeyHex)
        throw new BadRequestError('svc keys rotate-data-key needs SVC_DATA_KEY (the new key) and SVC_DATA_KEY_PREVIOUS (the old one, if any)');
      const report = await rotateDataKeys(pool, settings.dataKeyHex, settings.previousDataKeyHex);
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    }),
  );

/** Every read model of the project, with the model tables brought up to date first. */
async function projectRegistry(pool: ReturnType<typeof createPool>): Promise<ProjectionRegistry> {
  const settings = loadSettings();
  const project = await loadProject(settings.projectDir, settings);
  await prepareModelTables(pool, project.models);
  const registry = new ProjectionRegistry();
  for (const projection of project.projections) registry.register(projection);
  return registry;
}

program.parseAsync(process.argv).catch((error: unknown) => {
  // Settings and project errors list every problem; a stack would only hide them.
  if (error instanceof SettingsError || Array.isArray((error as { problems?: unknown }).problems)) process.stderr.write(`${(error as Error).message}\n`);
  // A refused command (bad input, a conflict) is the user's to fix: its code and message say how.
  else if (error instanceof AppError) process.stderr.write(`svc: ${error.code}: ${error.message}\n`);
  else process.stderr.write(`svc: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
