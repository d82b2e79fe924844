// GET /health over real HTTP: ok with a live database, 503 degraded when it refuses or hangs.
import { createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import pg from 'pg';
import { connectionConfig, withDatabase } from '../../src/db/pool.js';
import { DatabaseProbe } from '../../src/db/probe.js';
import { createApp } from '../../src/http/app.js';
import { healthRouter } from '../../src/http/health.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/kernel/logger.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase, testServerUrl } from '../support/db.js';
import { startTestService } from '../support/service.js';

describe('GET /health', () => {
  let service: Service;
  before(async () => {
    service = await startTestService();
  });
  after(async () => {
    await service?.close();
  });

  it('answers ok with the database status, uptime and version', async () => {
    const response = await fetch(`${service.url}/health`);
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { uptime_s: unknown; version: string };
    expect(body).to.include({ status: 'ok', database: 'ok' });
    expect(body.uptime_s).to.be.a('number');
    expect(body.version).to.match(/^\d+\.\d+\.\d+/);
  });

  it('answers ok while every connection of the pool is taken: its round trip has a connection of its own', async () => {
    const { pool, settings } = service.kernel;
    const taken = await Promise.all(Array.from({ length: settings.dbPoolSize }, () => pool.connect()));
    try {
      // Every connection the pool may open is held here (the service's own background work may be waiting for one too).
      expect([pool.totalCount, pool.idleCount], 'connections held, idle').to.deep.equal([settings.dbPoolSize, 0]);
      // Through the pool, SELECT 1 would wait for a free connection until its 2 s timeout, then answer 503.
      const response = await fetch(`${service.url}/health`);
      expect(response.status).to.equal(200);
      expect(await response.json()).to.include({ status: 'ok', database: 'ok' });
    } finally {
      taken.forEach((client) => client.release());
    }
  });
});

describe('GET /health when the database is down', () => {
  let service: Service;
  let databaseName: string;
  let admin: pg.Client;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    databaseName = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
    admin = new pg.Client({ connectionString: withDatabase(testServerUrl(), 'postgres') });
    await admin.connect();
    service = await startTestService({ databaseUrl });
  });
  after(async () => {
    await allowConnections(true).catch(() => undefined);
    await service?.close();
    await admin?.end();
  });

  async function allowConnections(allowed: boolean): Promise<void> {
    await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS ${allowed}`);
    if (!allowed) {
      // With a timeout, pg_terminate_backend waits until each backend has really exited.
      const { rows } = await admin.query<{ gone: boolean }>(
        'SELECT pg_terminate_backend(pid, 5000) AS gone FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [databaseName],
      );
      expect(rows.length, 'the service held no connection to terminate').to.be.greaterThan(0);
      expect(rows.every((r) => r.gone)).to.equal(true);
    }
  }

  async function health(): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
    const response = await fetch(`${service.url}/health`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, retryAfter: response.headers.get('retry-after') };
  }

  it('answers 503 degraded while the database refuses connections, and ok once it is back', async () => {
    expect((await health()).status).to.equal(200);

    await allowConnections(false);
    const down = await health();
    expect(down.status).to.equal(503);
    expect(down.body).to.include({ status: 'degraded', database: 'unreachable' });
    expect(Number(down.retryAfter), 'Retry-After').to.be.greaterThan(0);
    expect(down.body.uptime_s).to.be.a('number');
    expect(down.body.version).to.be.a('string');

    await allowConnections(true);
    const deadline = Date.now() + 5000;
    let up = await health();
    while (up.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      up = await health();
    }
    expect(up.status).to.equal(200);
    expect(up.body).to.include({ status: 'ok', database: 'ok' });
    expect(up.retryAfter).to.equal(null);
  });
});

describe('GET /health when the database does not answer', () => {
  // A TCP server that accepts and never speaks: a hung database or a black-holed network.
  let silent: Server;
  const sockets = new Set<Socket>();
  let probe: DatabaseProbe;
  let http: HttpServer;

  before(async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    probe = new DatabaseProbe(connectionConfig(`postgresql://svc@127.0.0.1:${port}/svc`));
    const app = createApp({
      logger: createLogger('silent'),
      bodyLimitBytes: 1024,
      routers: [healthRouter({ database: probe, version: '1.2.3', startedAt: Date.now(), timeoutMs: 300 })],
    });
    http = await listen(app, '127.0.0.1', 0);
  });
  after(async () => {
    await http?.close();
    for (const socket of sockets) socket.destroy();
    await probe?.close();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('gives up after its timeout and answers 503 degraded', async () => {
    const started = Date.now();
    // The server never answers: a response at all means the check gave up.
    const response = await fetch(`${http.url}/health`);
    const elapsed = Date.now() - started;
    expect(response.status).to.equal(503);
    expect(await response.json()).to.deep.include({ status: 'degraded', database: 'unreachable', version: '1.2.3' });
    // It waited its 300 ms timeout first: a lower bound, which load only makes safer.
    expect(elapsed).to.be.at.least(250);
  });
});
