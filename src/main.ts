// Composition root: settings -> project -> kernel (database, migrations, projections, event store) -> features -> routers -> app -> server.
import type { RetentionSweeper } from './runs/retention/sweeper.js';
import type { Router } from 'express';
import { startFeatures } from './app/features.js';
import { startKernel, type Kernel, type KernelOptions } from './app/kernel.js';
import { listenForScrapes, startMetrics } from './app/metrics.js';
import { loadProject } from './app/project.js';
import { serviceRouters } from './app/routers.js';
import { Stops } from './app/stops.js';
import type { Settings } from './config/settings.js';
import { createApp } from './http/app.js';
import { listMountedRoutes, type MountedRoutes } from './http/mountedRoutes.js';
import { listen, type HttpServer } from './http/server.js';
import { systemClock, type Clock } from './kernel/clock.js';
import type { Logger } from './kernel/logger.js';
import { SERVICE_VERSION } from './kernel/version.js';
import { prepareModelTables } from './models/boot.js';
import { startTracing } from './tracing/start.js';
import type { RunExecutor } from './runs/engine/executor.js';

export { startKernel, type Kernel, type KernelOptions };
export { featureProjections, loadProject, ProjectError } from './app/project.js';

export interface Service {
  readonly kernel: Kernel;
  readonly http: HttpServer;
  readonly url: string;
  readonly executor: RunExecutor;
  /** The retention sweeper of this process (tests run a pass on demand). */
  readonly retention: RetentionSweeper;
  /** The routes and path-scoped middleware the app mounted (the OpenAPI coverage test reads them). */
  listMountedRoutes(): MountedRoutes;
  close(): Promise<void>;
}

export interface ServiceOptions extends KernelOptions {
  /** Extra routers (tests). */
  routers?: Router[];
  clock?: Clock;
}

/** The whole service on settings.host:settings.port (port 0 picks a free one). */
export async function startService(settings: Settings, logger: Logger, options: ServiceOptions = {}): Promise<Service> {
  const project = await loadProject(settings.projectDir, settings);
  for (const warning of project.warnings) logger.warn(warning);
  const kernel = await startKernel(settings, logger, {
    ...options,
    projections: options.projections ?? project.projections,
    prepare: (pool) => prepareModelTables(pool, project.models),
  });
  const clock = options.clock ?? systemClock;
  const stops = new Stops();
  try {
    // First in, last out: the spans of everything stopped after it are still exported.
    stops.add(await startTracing(settings.tracing, logger));
    const features = await startFeatures(kernel, project, clock, stops);
    const routers = serviceRouters({ kernel, features, project, clock, extra: options.routers ?? [] });
    const app = createApp({ logger, bodyLimitBytes: settings.bodyLimitBytes, trustProxy: settings.trustProxy, routers });
    stops.add(startMetrics({ db: kernel.pool, projections: kernel.registry, horizon: kernel.horizon }));
    if (settings.metricsPort !== null) {
      const metricsHttp = await listenForScrapes(settings.host, settings.metricsPort);
      stops.add(() => metricsHttp.close());
    }
    const http = await listen(app, settings.host, settings.port);
    const { workflows, models, executor } = features;
    logger.info({ url: http.url, version: SERVICE_VERSION, workflows: workflows.names().length, models: models.names().length }, 'svc listening');
    return {
      kernel,
      http,
      url: http.url,
      executor,
      retention: features.retention,
      listMountedRoutes: () => listMountedRoutes(app),
      async close() {
        await http.close();
        await stops.stopAll();
        await kernel.close();
      },
    };
  } catch (error) {
    await stops.stopAllQuietly();
    await kernel.close();
    throw error;
  }
}
