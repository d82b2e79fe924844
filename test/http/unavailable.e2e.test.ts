// A lost database connection, as each layer reports it (the socket, PostgreSQL, node-postgres, the
// pool), answers 503 UNAVAILABLE with Retry-After and never the internal text; other errors stay 500.
import { createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import { Router } from 'express';
import { DatabaseError } from 'pg';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createApp } from '../../src/http/app.js';
import { toAppError } from '../../src/http/errors.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/kernel/logger.js';
import { call } from '../support/http.js';

function socketError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, syscall: 'connect', address: '127.0.0.1', port: 5432 });
}

function postgresError(code: string, message: string, severity = 'FATAL'): Error {
  return Object.assign(new DatabaseError(message, message.length, 'error'), { code, severity });
}

/** Each with the text it must not leak. */
const CONNECTION_LOSSES: Record<string, () => Error> = {
  'connection refused': () => socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
  'connection reset': () => socketError('ECONNRESET', 'read ECONNRESET'),
  // Node tries every address of a name (localhost: ::1 and 127.0.0.1) and reports them together.
  'refused on every address': () =>
    Object.assign(
      new AggregateError(
        [socketError('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432'), socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
        '',
      ),
      {
        code: 'ECONNREFUSED',
      },
    ),
  'SQLSTATE 08006 (connection failure)': () => postgresError('08006', 'connection failure'),
  'SQLSTATE 57P01 (terminated by an administrator)': () => postgresError('57P01', 'terminating connection due to administrator command'),
  'SQLSTATE 57P02 (crash shutdown)': () => postgresError('57P02', 'terminating connection because of crash of another server process'),
  'SQLSTATE 57P03 (cannot connect now)': () => postgresError('57P03', 'the database system is starting up'),
  // Found by test/faults/database.e2e.test.ts: these were 500 INTERNAL.
  'SQLSTATE 55000 as FATAL (a database with ALLOW_CONNECTIONS false)': () => postgresError('55000', 'database "svc" is not currently accepting connections'),
  'SQLSTATE 53300 (too many connections)': () => postgresError('53300', 'too many connections for database "svc"'),
  'the connection ended under a query': () => new Error('Connection terminated unexpectedly'),
  'the connect timeout': () => new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }),
  'the pool waited too long for a connection': () => new Error('timeout exceeded when trying to connect'),
  'a client whose connection broke': () => new Error('Client has encountered a connection error and is not queryable'),
};

const NOT_LOSSES: Record<string, () => Error> = {
  'a syntax error': () => postgresError('42601', 'syntax error at or near "SELEC"', 'ERROR'),
  'a unique violation': () => postgresError('23505', 'duplicate key value violates unique constraint "events_stream_position_key"', 'ERROR'),
  'SQLSTATE 55000 as a plain ERROR (a statement in the wrong state)': () => postgresError('55000', 'cannot refresh materialized view concurrently', 'ERROR'),
  'a plain bug': () => new TypeError("Cannot read properties of undefined (reading 'id')"),
};

describe('connection loss in the error map', () => {
  for (const [name, make] of Object.entries(CONNECTION_LOSSES)) {
    it(`${name} is UNAVAILABLE with a retry hint`, () => {
      const error = make();
      const mapped = toAppError(error);
      expect(mapped.code).to.equal('UNAVAILABLE');
      expect(mapped.fields.retryAfterSeconds).to.be.a('number').and.greaterThan(0);
      expect(mapped.message).to.not.include(error.message || 'ECONNREFUSED');
    });
  }

  it('an error caused by a lost connection is UNAVAILABLE too', () => {
    const wrapped = new Error('reading the run failed', { cause: socketError('ECONNRESET', 'read ECONNRESET') });
    expect(toAppError(wrapped).code).to.equal('UNAVAILABLE');
  });

  for (const [name, make] of Object.entries(NOT_LOSSES)) {
    it(`${name} stays INTERNAL`, () => {
      expect(toAppError(make()).code).to.equal('INTERNAL');
    });
  }
});

describe('connection loss over HTTP', () => {
  let http: HttpServer;
  before(async () => {
    const app = createApp({ logger: createLogger('silent'), bodyLimitBytes: 1024, routers: [lossRouter()] });
    http = await listen(app, '127.0.0.1', 0);
  });
  after(async () => {
    await http?.close();
  });

  function lossRouter(): Router {
    const router = Router();
    router.get('/boom/:index', (req) => {
      throw Object.values(CONNECTION_LOSSES)[Number(req.params.index)]!();
    });
    return router;
  }

  it('answers 503 {detail, code: UNAVAILABLE} with Retry-After, and no internal text', async () => {
    const makers = Object.values(CONNECTION_LOSSES);
    for (let index = 0; index < makers.length; index++) {
      const result = await call(http.url, 'GET', `/boom/${index}`);
      expect(result.status, JSON.stringify(result.body)).to.equal(503);
      expect(result.body).to.have.all.keys('detail', 'code');
      expect(result.body.code).to.equal('UNAVAILABLE');
      expect(Number(result.headers.get('retry-after'))).to.be.greaterThan(0);
      const text = JSON.stringify(result.body);
      for (const secret of ['ECONNREFUSED', 'ECONNRESET', '5432', 'terminating', 'Connection terminated', 'not queryable', 'timeout exceeded'])
        expect(text).to.not.include(secret);
    }
  });
});

describe('a database that accepts connections and never answers', () => {
  // A black-holed network or a hung server: without a connect timeout, every request would hang.
  let silent: Server;
  const sockets = new Set<Socket>();
  let pool: Pool;
  let http: HttpServer;

  before(async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    pool = createPool({ connectionString: `postgres://svc@127.0.0.1:${port}/svc`, max: 1, connectTimeoutMs: 300 });
    const router = Router();
    router.get('/query', async (_req, res) => {
      res.json((await pool.query('SELECT 1 AS one')).rows);
    });
    http = await listen(createApp({ logger: createLogger('silent'), bodyLimitBytes: 1024, routers: [router] }), '127.0.0.1', 0);
  });
  after(async () => {
    await http?.close();
    for (const socket of sockets) socket.destroy();
    await pool?.end();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('gives up after the connect timeout and answers 503 with Retry-After', async () => {
    const result = await call(http.url, 'GET', '/query');
    expect(result.status, JSON.stringify(result.body)).to.equal(503);
    expect(result.body.code).to.equal('UNAVAILABLE');
    expect(Number(result.headers.get('retry-after'))).to.be.greaterThan(0);
  });
});
