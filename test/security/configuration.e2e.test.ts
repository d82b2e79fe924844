// ASVS 5.0 V13 Configuration, V13.4 unintended information leakage, on the example project served from
// the repository itself (its .git, sources, package.json and dist/ sit in the project folder): none of
// them is served under any prefix or spelling, no folder is listed, TRACE and TRACK are refused, and no
// answer names the server's software or version.
import { connect } from 'node:net';
import { expect } from 'chai';
import { hit, startSuite, sweep, type Answered, type Suite } from './routes.js';

/** Files of the project folder (the repository) and of the packages the pages come from. */
const PROJECT_FILES = [
  '.git/config',
  '.git/HEAD',
  'package.json',
  'package-lock.json',
  '.env',
  'src/main.ts',
  'dist/main.js',
  'workflows/hello.yaml',
  'docker-compose.yml',
  'tsconfig.json',
];
/** Where a static folder is mounted, and how a path climbs out of one. */
const PREFIXES = [
  '/',
  '/docs/',
  '/redoc/',
  '/console/',
  '/console/assets/',
  '/console/assets/../../',
  '/console/assets/%2e%2e/%2e%2e/',
  '/docs/..%2f..%2f',
  '/redoc/%2e%2e%2f',
];
/** Files of swagger-ui-dist and redoc that the pages do not load (a README, Node sources, source maps, a sample page). */
const PACKAGE_FILES = [
  '/docs/package.json',
  '/docs/README.md',
  '/docs/absolute-path.js',
  '/docs/index.js',
  '/docs/index.html',
  '/docs/swagger-ui-bundle.js.map',
  '/redoc/redoc.lib.js',
  '/redoc/redoc.standalone.js.map',
];
const FOLDERS = ['/docs/', '/redoc/', '/console/assets/', '/console/assets', '/.git/', '/src/', '/workflows/', '/dist/'];

/** The raw answer to one request (sent with `Connection: close`) on a connection of its own. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Written, not ended: a half-closed connection may be closed by the server before it answers.
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text)).on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}

describe('ASVS V13 Configuration', function () {
  this.timeout(60_000);
  let suite: Suite;
  let answered: Answered[];

  before(async function () {
    this.timeout(60_000);
    suite = await startSuite({ logLevel: 'silent' });
    answered = await sweep(suite);
  });
  after(async () => {
    await suite?.service.close();
  });

  it('V13.4.1 V13.4.7 no .git, source, package.json, .env, workflow YAML or dist file is served, under any prefix or encoding, with or without a token', async () => {
    const served: string[] = [];
    for (const prefix of PREFIXES) {
      for (const file of PROJECT_FILES) {
        for (const token of [undefined, suite.admin.token]) {
          const answer = await hit(suite.service.url, { method: 'GET', url: `${prefix}${file}` }, token !== undefined ? { token } : {});
          // A path under /console that is no file is a page of the app: its index page, not the file.
          const isConsolePage = prefix.startsWith('/console/') && answer.text.includes('<div id="root">');
          const isServed = answer.status < 400 && !isConsolePage;
          if (isServed || /repositoryformatversion|"dependencies"|kind: Workflow|import \{|compilerOptions/.test(answer.text))
            served.push(`${prefix}${file}: ${answer.status}`);
        }
      }
    }
    expect(served, served.join('\n')).to.deep.equal([]);
  });

  it("V13.4.7 /docs and /redoc serve only the files their pages load, not the rest of their packages' folders", async () => {
    const served: string[] = [];
    for (const url of PACKAGE_FILES) {
      const answer = await hit(suite.service.url, { method: 'GET', url });
      if (answer.status !== 404 || answer.body?.code !== 'NOT_FOUND') served.push(`${url}: ${answer.status} ${answer.headers.get('content-type')}`);
    }
    expect(served, served.join('\n')).to.deep.equal([]);
    for (const url of ['/docs/', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/swagger-ui-init.js', '/redoc', '/redoc/redoc.standalone.js']) {
      expect((await hit(suite.service.url, { method: 'GET', url })).status, url).to.equal(200);
    }
  });

  it('V13.4.3 no folder is listed: a folder answers 404 or its page, never an index of files', async () => {
    const listed: string[] = [];
    for (const url of FOLDERS) {
      const answer = await hit(suite.service.url, { method: 'GET', url });
      if (
        /Index of|<a href="[^"]+\.(js|css|map|json|md)">/i.test(answer.text) ||
        (answer.status === 200 && !(answer.headers.get('content-type') ?? '').startsWith('text/html'))
      ) {
        listed.push(`${url}: ${answer.status}`);
      }
    }
    expect(listed, listed.join('\n')).to.deep.equal([]);
  });

  it('V13.4.4 TRACE and TRACK are refused and echo nothing of the request', async () => {
    for (const method of ['TRACE', 'TRACK']) {
      for (const url of ['/', '/health', '/auth/me', '/docs/']) {
        const answer = await rawExchange(
          suite.service.url,
          `${method} ${url} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer probe-${method}\r\nX-Probe: echo-me\r\nConnection: close\r\n\r\n`,
        );
        expect(answer, `${method} ${url}`).to.match(/^HTTP\/1\.1 4\d\d /);
        expect(answer, `${method} ${url}`).not.to.match(/echo-me|probe-TR/);
      }
    }
  });

  it('V13.4.6 no answer names the server software or a version of a backend component (no X-Powered-By, no Server, no PostgreSQL or Node.js version)', async () => {
    const pages = ['/docs/', '/redoc', '/console', '/health', '/openapi.json', '/auth/jwks.json', '/no/such/page'];
    const all = [
      ...answered.map(({ route, answer }) => ({ key: route.key, answer })),
      ...(await Promise.all(pages.map(async (url) => ({ key: url, answer: await hit(suite.service.url, { method: 'GET', url }) })))),
    ];
    const told: string[] = [];
    for (const { key, answer } of all) {
      for (const name of ['x-powered-by', 'server', 'x-aspnet-version', 'via'])
        if (answer.headers.get(name) !== null) told.push(`${key}: ${name}: ${answer.headers.get(name)}`);
      if (/PostgreSQL \d|node\/?v?\d+\.\d+|Express\/?\d|\bpg@\d/i.test(answer.text)) told.push(`${key}: names a backend version`);
    }
    expect(all.length).to.be.greaterThan(100);
    expect(told, told.join('\n')).to.deep.equal([]);
  });
});
