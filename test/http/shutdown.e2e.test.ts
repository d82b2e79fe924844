// Graceful shutdown: service.close() stops accepting, lets an in-flight request finish, then resolves.
import { expect } from 'chai';
import { Router } from 'express';
import type { Service } from '../../src/main.js';
import { withDeadline } from '../support/http.js';
import { startTestService } from '../support/service.js';

const SLOW_MS = 500;
/** Generous for a 500 ms request, yet half the 10 s grace period close() would otherwise wait out. */
const CLOSE_DEADLINE_MS = 5000;

describe('service.close()', () => {
  let service: Service | undefined;
  afterEach(async () => {
    // Only reached when a test failed before closing.
    await service?.close().catch(() => undefined);
  });

  it('lets a slow in-flight request finish with 200 before resolving', async () => {
    let signalArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (signalArrived = resolve));
    const router = Router();
    router.get('/test/slow', async (_req, res) => {
      signalArrived();
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      res.json({ finished: true });
    });
    const started = await startTestService({ routers: [router] });
    service = started;

    // A finished request first, so an idle keep-alive connection is open too.
    expect((await fetch(`${started.url}/health`)).status).to.equal(200);

    const events: string[] = [];
    const inFlight = fetch(`${started.url}/test/slow`).then(async (response) => {
      const body: unknown = await response.json();
      events.push('response');
      return { status: response.status, body };
    });
    await arrived;
    const closing = started.close().then(() => events.push('closed'));

    // A new connection is refused while the slow one is still being answered.
    const refused = await fetch(`${started.url}/health`).then(
      () => false,
      () => true,
    );
    expect(refused, 'a new request after close() began was accepted').to.equal(true);

    // Waited for the request (the response comes first), but not for keep-alive or the grace period.
    const [answer] = await withDeadline(Promise.all([inFlight, closing]), CLOSE_DEADLINE_MS, 'close() with a finished request in flight');
    service = undefined;
    expect(answer).to.deep.equal({ status: 200, body: { finished: true } });
    expect(events).to.deep.equal(['response', 'closed']);
  });
});
