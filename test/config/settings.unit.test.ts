// loadSettings: defaults, svc.yaml under the environment, one SettingsError naming every problem, a frozen result.
import { availableParallelism } from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SETTING_NAMES } from '../../src/config/schema.js';
import { loadSettings, SettingsError, type Settings } from '../../src/config/settings.js';

const KEY = 'a'.repeat(32) + 'B'.repeat(32);
const OTHER_KEY = '0123456789abcdef'.repeat(4);

describe('loadSettings', () => {
  let projectDir: string;

  beforeEach(() => {
    projectDir = mkdtempSync(path.join(tmpdir(), 'svc-settings-'));
  });
  afterEach(() => {
    rmSync(projectDir, { recursive: true, force: true });
  });

  function writeSystemConfig(text: string, dir = projectDir): void {
    writeFileSync(path.join(dir, 'svc.yaml'), text);
  }

  /** The SettingsError loadSettings throws; fails the test when it returns instead. */
  function problemsOf(env: Record<string, string>, cwd = projectDir): readonly string[] {
    let settings: Settings;
    try {
      settings = loadSettings(env, cwd);
    } catch (error) {
      expect(error).to.be.instanceOf(SettingsError);
      return (error as SettingsError).problems;
    }
    expect.fail(`expected a SettingsError, got settings ${JSON.stringify(settings)}`);
  }

  describe('defaults', () => {
    it('answers the documented defaults for an empty environment and no svc.yaml', () => {
      const settings = loadSettings({}, projectDir);
      expect(settings).to.deep.include({
        host: '127.0.0.1',
        port: 8000,
        databaseUrl: undefined,
        projectDir,
        env: 'development',
        signingKeyHex: undefined,
        tokenTtlSeconds: 86400,
        exposeModelCrud: true,
        redisUrl: undefined,
        syncTimeoutMs: 30000,
        tenantIds: undefined,
        workers: 1,
        passwordHashConcurrency: Math.max(1, availableParallelism() - 1),
        streamOpenConcurrency: 4,
        logLevel: 'info',
        bodyLimitBytes: 1024 * 1024,
        dbPoolSize: 10,
        dbConnectTimeoutMs: 10_000,
        horizonStallSeconds: 10,
        loginThrottle: true,
        trustProxy: false,
      });
      expect(settings.dev).to.deep.equal({
        enabled: false,
        allowDevAuth: false,
        apiKey: undefined,
        autoLogin: false,
        ipAllowlist: ['127.0.0.1', '::1'],
      });
      expect(settings.warnings).to.deep.equal([]);
    });

    it('treats an empty variable as unset', () => {
      const settings = loadSettings({ PORT: '', HOST: '', SVC_LOG_LEVEL: '' }, projectDir);
      expect(settings).to.include({ port: 8000, host: '127.0.0.1', logLevel: 'info' });
    });

    it('parses lists, booleans, URLs and OAuth credentials from the environment', () => {
      const settings = loadSettings(
        {
          PORT: '0',
          DATABASE_URL: 'postgresql://u:p@db:5432/svc',
          SVC_TENANT_IDS: ' acme, globex ,,',
          SVC_EXPOSE_MODEL_CRUD: 'off',
          SVC_REDIS_URL: 'redis://cache:6379',
          SVC_OAUTH_GITHUB_CLIENT_ID: 'gh-id',
          SVC_OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
          SVC_OAUTH_AZURE_AD_CLIENT_ID: 'az-id',
        },
        projectDir,
      );
      expect(settings.port).to.equal(0);
      expect(settings.databaseUrl).to.equal('postgresql://u:p@db:5432/svc');
      expect(settings.tenantIds).to.deep.equal(['acme', 'globex']);
      expect(settings.exposeModelCrud).to.equal(false);
      expect(settings.redisUrl).to.equal('redis://cache:6379');
      expect(settings.warnings.join('\n')).to.match(/SVC_REDIS_URL is accepted but not used/);
      expect(settings.oauth.clientCredentials).to.deep.equal({
        github: { clientId: 'gh-id', clientSecret: 'gh-secret' },
        azure_ad: { clientId: 'az-id' },
      });
    });

    it('resolves SVC_PROJECT_DIR against the working directory and reads svc.yaml there', () => {
      mkdirSync(path.join(projectDir, 'project'));
      writeSystemConfig('kind: SystemConfig\nspec:\n  settings:\n    PORT: 9001\n', path.join(projectDir, 'project'));
      const settings = loadSettings({ SVC_PROJECT_DIR: 'project' }, projectDir);
      expect(settings.projectDir).to.equal(path.join(projectDir, 'project'));
      expect(settings.port).to.equal(9001);
    });
  });

  describe('svc.yaml', () => {
    const SYSTEM_CONFIG = [
      'apiVersion: svc/v1',
      'kind: SystemConfig',
      'spec:',
      '  deployment_mode: test',
      '  api:',
      '    expose_model_crud: false',
      '  settings:',
      '    PORT: 9000',
      '    HOST: 0.0.0.0',
      '    SVC_LOG_LEVEL: debug',
      '    SVC_TOKEN_TTL_SECONDS: 0',
      '',
    ].join('\n');

    it('reads spec.api.expose_model_crud, spec.deployment_mode and spec.settings', () => {
      writeSystemConfig(SYSTEM_CONFIG);
      const settings = loadSettings({}, projectDir);
      expect(settings).to.include({ port: 9000, host: '0.0.0.0', logLevel: 'debug', tokenTtlSeconds: 0, exposeModelCrud: false, env: 'test' });
    });

    it('lets the environment win over every value of the file', () => {
      writeSystemConfig(SYSTEM_CONFIG);
      const settings = loadSettings(
        { PORT: '9100', HOST: '::1', SVC_LOG_LEVEL: 'warn', SVC_TOKEN_TTL_SECONDS: '60', SVC_EXPOSE_MODEL_CRUD: 'true', SVC_ENV: 'development' },
        projectDir,
      );
      expect(settings).to.include({ port: 9100, host: '::1', logLevel: 'warn', tokenTtlSeconds: 60, exposeModelCrud: true, env: 'development' });
    });

    it('finds the SystemConfig document among several documents', () => {
      writeSystemConfig(['kind: Workflow', 'spec:', '  settings:', '    PORT: 1', '---', SYSTEM_CONFIG].join('\n'));
      expect(loadSettings({}, projectDir).port).to.equal(9000);
    });

    it('ignores a file without a SystemConfig document', () => {
      writeSystemConfig('kind: Workflow\nspec:\n  settings:\n    PORT: 1\n');
      expect(loadSettings({}, projectDir).port).to.equal(8000);
    });

    it('lists unknown settings, a bad deployment mode and a non-boolean expose_model_crud together', () => {
      writeSystemConfig(
        [
          'kind: SystemConfig',
          'spec:',
          '  deployment_mode: staging',
          '  api:',
          '    expose_model_crud: "sometimes"',
          '  settings:',
          '    NOT_A_SETTING: 1',
          '    PORT: nope',
          '',
        ].join('\n'),
      );
      const problems = problemsOf({});
      expect(problems).to.have.length(4);
      expect(problems.join('\n'))
        .to.include('spec.deployment_mode')
        .and.to.include('expose_model_crud')
        .and.to.include('NOT_A_SETTING')
        .and.to.include('PORT must be an integer');
    });

    it('refuses a file that is not valid YAML instead of reading part of it', () => {
      writeSystemConfig('kind: SystemConfig\nspec:\n  settings:\n    PORT: [9000,\n');
      const problems = problemsOf({});
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^svc\.yaml cannot be read/);
    });
  });

  describe('SVC_TRUST_PROXY', () => {
    it("reads Express's trust proxy values: a flag, a hop count, a list of addresses, ranges and names", () => {
      const read = (value: string) => loadSettings({ SVC_TRUST_PROXY: value }, projectDir).trustProxy;
      expect(read('false')).to.equal(false);
      expect(read('TRUE')).to.equal(true);
      expect(read('2')).to.equal(2);
      expect(read('loopback, 10.0.0.0/8,fd00::/8, 192.0.2.1')).to.deep.equal(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.1']);
    });

    it('refuses what Express could not read, naming it', () => {
      expect(problemsOf({ SVC_TRUST_PROXY: 'loopback,10.0.0.0/33,proxy.example.com' })).to.deep.equal([
        'SVC_TRUST_PROXY must be true, false, a hop count, or a comma list of addresses, CIDR ranges, loopback, linklocal, uniquelocal (cannot read: 10.0.0.0/33, proxy.example.com)',
      ]);
    });
  });

  describe('invalid settings', () => {
    it('names every invalid setting in one SettingsError', () => {
      let caught: unknown;
      try {
        loadSettings(
          {
            PORT: 'abc',
            SVC_TOKEN_TTL_SECONDS: '-1',
            SVC_LOG_LEVEL: 'loud',
            DATABASE_URL: 'mysql://db/svc',
            SVC_WORKERS: '0',
            SVC_EXPOSE_MODEL_CRUD: 'maybe',
            SVC_REDIS_URL: 'not a url',
            SVC_ENV: 'staging',
            SVC_BODY_LIMIT_BYTES: '1.5',
          },
          projectDir,
        );
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(SettingsError);
      const { problems, message } = caught as SettingsError;
      const names = [
        'PORT',
        'SVC_TOKEN_TTL_SECONDS',
        'SVC_LOG_LEVEL',
        'DATABASE_URL',
        'SVC_WORKERS',
        'SVC_EXPOSE_MODEL_CRUD',
        'SVC_REDIS_URL',
        'SVC_ENV',
        'SVC_BODY_LIMIT_BYTES',
      ];
      expect(problems).to.have.length(names.length);
      for (const name of names) {
        expect(
          problems.some((p) => p.startsWith(`${name} `)),
          name,
        ).to.equal(true);
        expect(message).to.include(`  - ${name} `);
      }
    });

    it('checks the rules between settings even when a setting is invalid on its own', () => {
      const problems = problemsOf({ PORT: 'abc', SVC_DEV_MODE: 'true', SVC_DEV_API_KEY: 'bad', SVC_ENV: 'production' });
      expect(problems).to.deep.equal([
        'PORT must be an integer from 0 to 65535 (got "abc")',
        'SVC_DEV_API_KEY must look like XXXX-XXXX-XXXX-XXXX (uppercase letters and digits)',
        'SVC_DEV_MODE=true is refused when SVC_ENV=production',
        'SVC_DEV_MODE=true also needs SVC_ALLOW_DEV_AUTH=true',
        'SVC_SIGNING_KEY is required when SVC_ENV=production',
      ]);
    });

    it('accepts every setting of the schema under spec.settings', () => {
      writeSystemConfig(['kind: SystemConfig', 'spec:', '  settings:', ...SETTING_NAMES.map((name) => `    ${name}: ""`), ''].join('\n'));
      // Like the signing key, an empty data key is refused rather than read as unset.
      expect(problemsOf({})).to.deep.equal([
        'SVC_SIGNING_KEY must be 64 hex characters (a 32-byte Ed25519 private key)',
        'SVC_DATA_KEY must be 64 hex characters (a 32-byte AES-256 key that wraps the personal data keys)',
      ]);
    });

    it('reads SVC_HORIZON_STALL_SECONDS (at least 1)', () => {
      expect(loadSettings({ SVC_HORIZON_STALL_SECONDS: '3' }, projectDir).horizonStallSeconds).to.equal(3);
      expect(problemsOf({ SVC_HORIZON_STALL_SECONDS: '0' })).to.deep.equal(['SVC_HORIZON_STALL_SECONDS must be an integer from 1 to 86400 (got "0")']);
    });

    it('reads SVC_READ_DATABASE_URL and SVC_READ_REPLICA_WAIT_MS; a replica needs DATABASE_URL', () => {
      expect(loadSettings({}, projectDir)).to.include({ readDatabaseUrl: undefined, readReplicaWaitMs: 500 });
      const env = { DATABASE_URL: 'postgres://db/svc', SVC_READ_DATABASE_URL: 'postgres://replica/svc', SVC_READ_REPLICA_WAIT_MS: '50' };
      expect(loadSettings(env, projectDir)).to.include({ readDatabaseUrl: 'postgres://replica/svc', readReplicaWaitMs: 50 });
      expect(problemsOf({ SVC_READ_DATABASE_URL: 'postgres://replica/svc' })).to.deep.equal([
        'SVC_READ_DATABASE_URL needs DATABASE_URL (a replica of the embedded server is not supported)',
      ]);
      expect(problemsOf({ DATABASE_URL: 'postgres://db/svc', SVC_READ_DATABASE_URL: 'http://replica' })).to.have.length(1);
    });

    it('refuses integers out of range and non-integers', () => {
      const problems = problemsOf({ PORT: '65536', SVC_SYNC_TIMEOUT_MS: '1e3', SVC_DB_POOL_SIZE: '0x10' });
      expect(problems).to.have.length(3);
      expect(problems[0]).to.equal('PORT must be an integer from 0 to 65535 (got "65536")');
    });
  });

  describe('signing key', () => {
    it('refuses production without SVC_SIGNING_KEY', () => {
      expect(problemsOf({ SVC_ENV: 'production' })).to.deep.equal(['SVC_SIGNING_KEY is required when SVC_ENV=production']);
    });

    it('refuses production without a key when svc.yaml sets deployment_mode production', () => {
      writeSystemConfig('kind: SystemConfig\nspec:\n  deployment_mode: production\n');
      expect(problemsOf({})).to.deep.equal(['SVC_SIGNING_KEY is required when SVC_ENV=production']);
    });

    it('accepts production with a key and keeps it lower-cased', () => {
      const settings = loadSettings({ SVC_ENV: 'production', SVC_SIGNING_KEY: KEY }, projectDir);
      expect(settings.env).to.equal('production');
      expect(settings.signingKeyHex).to.equal(KEY.toLowerCase());
    });

    it('refuses a key that is not 64 hex characters', () => {
      for (const bad of ['abc', 'g'.repeat(64), 'a'.repeat(66)]) {
        expect(problemsOf({ SVC_SIGNING_KEY: bad }), bad).to.deep.equal(['SVC_SIGNING_KEY must be 64 hex characters (a 32-byte Ed25519 private key)']);
      }
    });

    it('reads the legacy SVC_BISCUIT_PRIVATE_KEY with a warning', () => {
      const settings = loadSettings({ SVC_ENV: 'production', SVC_BISCUIT_PRIVATE_KEY: OTHER_KEY }, projectDir);
      expect(settings.signingKeyHex).to.equal(OTHER_KEY);
      expect(settings.warnings).to.have.length(1);
      expect(settings.warnings[0]).to.include('SVC_BISCUIT_PRIVATE_KEY').and.include('SVC_SIGNING_KEY');
    });

    it('prefers SVC_SIGNING_KEY over the legacy name, without a warning', () => {
      const settings = loadSettings({ SVC_SIGNING_KEY: KEY, SVC_BISCUIT_PRIVATE_KEY: OTHER_KEY }, projectDir);
      expect(settings.signingKeyHex).to.equal(KEY.toLowerCase());
      expect(settings.warnings).to.deep.equal([]);
    });
  });

  describe('dev mode', () => {
    const DEV = { SVC_DEV_MODE: 'true', SVC_ALLOW_DEV_AUTH: 'true', SVC_DEV_API_KEY: 'AB12-CD34-EF56-GH78' };

    it('accepts a complete dev configuration', () => {
      const settings = loadSettings({ ...DEV, SVC_DEV_AUTO_LOGIN: 'yes', SVC_DEV_IP_ALLOWLIST: '10.0.0.1, 10.0.0.2' }, projectDir);
      expect(settings.dev).to.deep.equal({
        enabled: true,
        allowDevAuth: true,
        apiKey: 'AB12-CD34-EF56-GH78',
        autoLogin: true,
        ipAllowlist: ['10.0.0.1', '10.0.0.2'],
      });
    });

    it('refuses dev mode in production', () => {
      const problems = problemsOf({ ...DEV, SVC_ENV: 'production', SVC_SIGNING_KEY: KEY });
      expect(problems).to.deep.equal(['SVC_DEV_MODE=true is refused when SVC_ENV=production']);
    });

    it('refuses dev mode without SVC_ALLOW_DEV_AUTH', () => {
      expect(problemsOf({ ...DEV, SVC_ALLOW_DEV_AUTH: 'false' })).to.deep.equal(['SVC_DEV_MODE=true also needs SVC_ALLOW_DEV_AUTH=true']);
      const { SVC_ALLOW_DEV_AUTH: _unused, ...withoutAllow } = DEV;
      expect(problemsOf(withoutAllow)).to.deep.equal(['SVC_DEV_MODE=true also needs SVC_ALLOW_DEV_AUTH=true']);
    });

    it('refuses a dev key of the wrong format', () => {
      for (const bad of ['ab12-cd34-ef56-gh78', 'AB12CD34EF56GH78', 'AB12-CD34-EF56', 'AB12-CD34-EF56-GH78-']) {
        expect(problemsOf({ ...DEV, SVC_DEV_API_KEY: bad }), bad).to.deep.equal([
          'SVC_DEV_API_KEY must look like XXXX-XXXX-XXXX-XXXX (uppercase letters and digits)',
        ]);
      }
    });

    it('refuses dev mode without a dev key', () => {
      const { SVC_DEV_API_KEY: _unused, ...withoutKey } = DEV;
      expect(problemsOf(withoutKey)).to.deep.equal(['SVC_DEV_MODE=true also needs SVC_DEV_API_KEY']);
    });
  });

  it('answers a deeply frozen object', () => {
    const settings = loadSettings({ SVC_TENANT_IDS: 'a,b', SVC_OAUTH_GITHUB_CLIENT_ID: 'x' }, projectDir);
    expect(Object.isFrozen(settings)).to.equal(true);
    expect(Object.isFrozen(settings.dev)).to.equal(true);
    expect(Object.isFrozen(settings.dev.ipAllowlist)).to.equal(true);
    expect(Object.isFrozen(settings.tenantIds)).to.equal(true);
    expect(Object.isFrozen(settings.oauth.clientCredentials.github)).to.equal(true);
    expect(Object.isFrozen(settings.warnings)).to.equal(true);
    // ES modules run in strict mode: writing to a frozen object throws.
    expect(() => {
      (settings as { port: number }).port = 1;
    }).to.throw(TypeError);
    expect(() => (settings.dev.ipAllowlist as string[]).push('0.0.0.0')).to.throw(TypeError);
    expect(settings.port).to.equal(8000);
  });
});
