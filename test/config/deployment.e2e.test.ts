// docker-compose.yml and Dockerfile, checked without Docker: parsed, their settings loaded, their healthchecks run.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';
import { loadSettings } from '../../src/config/settings.js';
import type { Service } from '../../src/main.js';
import { freePort } from '../support/db.js';
import { startTestService } from '../support/service.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
}

function readCompose(): { services: Record<string, ComposeService> } {
  // Compose resolves `<<: *anchor` merge keys; YAML 1.2 needs them asked for.
  return parse(readFileSync(path.join(REPO, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
}

/** `${NAME:-default}` and `${NAME:?message}` as compose substitutes them from `vars`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_all, name: string, kind?: string, rest?: string) => {
    const set = vars[name];
    if (set !== undefined && set !== '') return set;
    if (kind === '-') return rest ?? '';
    throw new Error(`${name} is required: ${rest}`);
  });
}

async function runNode(args: string[], env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return code;
}

describe('deployment files', () => {
  const compose = readCompose();
  const replicas = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

  describe('docker-compose.yml', () => {
    it('runs PostgreSQL 16 with a healthcheck, and no Redis (the log carries revocations to every replica)', () => {
      expect(compose.services.postgres?.image).to.match(/^postgres:16(\.|-|$)/);
      expect(compose.services.postgres?.healthcheck?.test.join(' ')).to.include('pg_isready');
      expect(compose.services.redis).to.equal(undefined);
    });

    it('runs two replicas built from the Dockerfile, after a healthy PostgreSQL, on distinct host ports', () => {
      expect(replicas).to.have.length(2);
      for (const [name, service] of replicas) {
        expect(service.build, name).to.deep.equal({ context: '.', dockerfile: 'Dockerfile' });
        expect(service.depends_on, name).to.deep.equal({ postgres: { condition: 'service_healthy' } });
        expect(service.healthcheck?.test.slice(0, 3), name).to.deep.equal(['CMD', 'node', '-e']);
      }
      const hostPorts = replicas.map(([, s]) => s.ports?.[0]?.split(':').slice(0, -1).join(':'));
      expect(new Set(hostPorts).size).to.equal(2);
    });

    it('gives both replicas the same valid settings: 0.0.0.0, the postgres service, one shared signing key', () => {
      const vars = { SVC_SIGNING_KEY: 'ab'.repeat(32), SVC_DB_PASSWORD: 'cd'.repeat(24) };
      const environments = replicas.map(([, s]) => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)])));
      expect(environments[0]).to.deep.equal(environments[1]);
      const settings = loadSettings(environments[0]!, REPO);
      expect(settings.host).to.equal('0.0.0.0');
      expect(new URL(settings.databaseUrl!).hostname).to.equal('postgres');
      expect(settings.redisUrl).to.equal(undefined);
      expect(settings.signingKeyHex).to.equal(vars.SVC_SIGNING_KEY);
      // Without a shared key each replica would sign with its own ephemeral one.
      expect(() => replicas.map(([, s]) => interpolate(s.environment?.SVC_SIGNING_KEY ?? '', {}))).to.throw(/SVC_SIGNING_KEY is required/);
    });

    it('V13.2.3 has no default database password: PostgreSQL and both replicas take SVC_DB_PASSWORD, which must be set', () => {
      const vars = { SVC_DB_PASSWORD: 'cd'.repeat(24) };
      expect(interpolate(compose.services.postgres?.environment?.POSTGRES_PASSWORD ?? '', vars)).to.equal(vars.SVC_DB_PASSWORD);
      for (const [name, service] of replicas) {
        expect(new URL(interpolate(service.environment?.DATABASE_URL ?? '', vars)).password, name).to.equal(vars.SVC_DB_PASSWORD);
        expect(() => interpolate(service.environment?.DATABASE_URL ?? '', {}), name).to.throw(/SVC_DB_PASSWORD is required/);
      }
      expect(() => interpolate(compose.services.postgres?.environment?.POSTGRES_PASSWORD ?? '', {})).to.throw(/SVC_DB_PASSWORD is required/);
    });
  });

  describe('Dockerfile', () => {
    const dockerfile = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');

    it('builds on node:20 with npm ci and npm run build, and serves with node bin/svc.js serve on 0.0.0.0', () => {
      const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
      expect(froms).to.not.be.empty;
      for (const from of froms) expect(from).to.match(/^node:20(-|$)/);
      expect(dockerfile).to.match(/^RUN npm ci\b/m);
      expect(dockerfile).to.match(/^RUN npm run build\b/m);
      expect(dockerfile).to.match(/^CMD \["node", "bin\/svc\.js", "serve"\]$/m);
      expect(dockerfile).to.match(/HOST=0\.0\.0\.0/);
    });

    it('keeps node_modules, dist and local data out of the build context', () => {
      const ignored = readFileSync(path.join(REPO, '.dockerignore'), 'utf8').split('\n');
      expect(ignored).to.include.members(['node_modules', 'dist', '.svc', '.git']);
    });
  });

  describe('healthcheck commands against a real service', () => {
    let service: Service;
    before(async () => {
      service = await startTestService();
    });
    after(async () => {
      await service?.close();
    });

    function composeProbe(port: string): string[] {
      const test = replicas[0]![1].healthcheck!.test;
      return test.slice(2).map((arg) => arg.replace('127.0.0.1:8000', `127.0.0.1:${port}`));
    }

    function dockerfileProbe(): string[] {
      const match = /HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])$/m.exec(readFileSync(path.join(REPO, 'Dockerfile'), 'utf8'));
      expect(match, 'HEALTHCHECK ... CMD [...] in the Dockerfile').to.not.equal(null);
      return (JSON.parse(match![1]!) as string[]).slice(1);
    }

    it('the compose healthcheck exits 0 on a healthy service and 1 when nothing listens', async () => {
      const port = new URL(service.url).port;
      expect(await runNode(composeProbe(port), {})).to.equal(0);
      expect(await runNode(composeProbe(String(await freePort())), {})).to.equal(1);
    });

    it('the Dockerfile healthcheck exits 0 on a healthy service (PORT from the environment) and 1 when nothing listens', async () => {
      const port = new URL(service.url).port;
      expect(await runNode(dockerfileProbe(), { PORT: port })).to.equal(0);
      expect(await runNode(dockerfileProbe(), { PORT: String(await freePort()) })).to.equal(1);
    });
  });
});
