// The example project's service_status workflow: an APICall example that is no open proxy in any mode.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { journalOf } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { FakeServer, sendJson } from '../workflows/helpers.js';
import { DEV_ENV, EXAMPLE_PROJECT } from './helpers.js';

describe('the example service_status workflow', function () {
  this.timeout(30_000);
  const internal = new FakeServer();
  let service: Service;
  let user: { id: string; token: string };

  before(async () => {
    await internal.start();
    internal.on('/secret', (_req, res) => sendJson(res, 200, { status: 'ok', version: 'internal-only' }));
    // Development mode with the dev routes on: where everything else is allowed to reach anywhere.
    service = await startTestService({ projectDir: EXAMPLE_PROJECT, env: DEV_ENV });
    const admin = await bootstrapAdmin(service.url);
    user = await createUser(service.url, admin.token, 'status-user@example.com', { status_readers: ['runs:read'] });
  });
  after(async () => {
    await service?.close();
    await internal.stop();
  });

  it('takes no URL from the caller: a signed-in user cannot make the server fetch an address of their choosing', async () => {
    const attempts = [
      { url: `${internal.url}/secret` },
      { page: `${new URL(internal.url).host}/secret?` },
      { page: 'www.githubstatus.com', url: `${internal.url}/secret` },
      { page: `127.0.0.1:${service.url.split(':').pop()}/insight?` },
    ];
    for (const input of attempts) {
      const result = await call(service.url, 'POST', '/api/status', { token: user.token, json: input });
      expect(result.status, `${JSON.stringify(input)}: ${JSON.stringify(result.body)}`).to.equal(422);
    }
    expect(internal.requests, 'requests that reached the internal server').to.deep.equal([]);
  });

  it('asks one of a fixed set of public status pages, named by the caller', async () => {
    const result = await call(service.url, 'POST', '/api/status', { token: user.token, json: { page: 'www.githubstatus.com' } });
    // The answer depends on whether this machine reaches the internet; the request it made does not.
    expect([201, 502], JSON.stringify(result.body)).to.include(result.status);
    const journal = await journalOf(service.url, user.token, result.headers.get('x-svc-run-id')!);
    const call_ = journal.find((e) => (e.type === 'step_completed' || e.type === 'step_failed') && e.agent_id === 'call');
    expect(call_.payload.request).to.deep.include({ method: 'GET', url: 'https://www.githubstatus.com/api/v2/status.json' });
  });
});
