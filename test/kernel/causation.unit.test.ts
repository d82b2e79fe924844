// The cause of events (BEYOND 3.1): the context in effect, nested contexts, and metadata completed but never overridden.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { actorOf, causationMetadata, currentCausation, SERVICE_CAUSATION, withCause, withCausation, type Causation } from '../../src/kernel/causation.js';

const request: Causation = { actor: { type: 'user', id: 'u1' }, source: 'http', requestId: 'r1', tenant: 't1' };

describe('kernel/causation', () => {
  it('is the service itself outside any context, and the innermost context within', async () => {
    expect(currentCausation()).to.equal(SERVICE_CAUSATION);
    await withCausation(request, async () => {
      await sleep(1);
      expect(currentCausation()).to.equal(request);
      withCausation({ actor: { type: 'schedule', id: 'w/s' }, source: 'scheduler' }, () => expect(currentCausation().source).to.equal('scheduler'));
      expect(currentCausation()).to.equal(request);
    });
  });

  it('reads a lazy cause when asked (a principal known only later)', () => {
    let principal: Parameters<typeof actorOf>[0];
    withCausation(
      () => ({ actor: actorOf(principal), source: 'http' }),
      () => {
        expect(currentCausation().actor).to.deep.equal({ type: 'system', id: 'anonymous' });
        principal = { userId: 'dev', groups: [], scopes: [], isDev: true };
        expect(currentCausation().actor).to.deep.equal({ type: 'dev', id: 'dev' });
      },
    );
  });

  it('stores {actor, source, request_id?, tenant?}', () => {
    expect(causationMetadata(request)).to.deep.equal({ actor: { type: 'user', id: 'u1' }, source: 'http', request_id: 'r1', tenant: 't1' });
    expect(causationMetadata(SERVICE_CAUSATION)).to.deep.equal({ actor: { type: 'system', id: 'svc' }, source: 'executor' });
  });

  it('completes partial metadata from the context, and keeps complete metadata as it is', () => {
    withCausation(request, () => {
      expect(withCause(undefined)).to.deep.equal(causationMetadata(request));
      expect(withCause({ step: 's1' })).to.deep.equal({ ...causationMetadata(request), step: 's1' });
      expect(withCause({ actor: { type: 'system', id: 'x' } })).to.deep.equal({ ...causationMetadata(request), actor: { type: 'system', id: 'x' } });
      // Prepared elsewhere (a run's event written by another run's group commit): no request id of this one.
      const prepared = { actor: { type: 'user', id: 'u2' }, source: 'executor' };
      expect(withCause(prepared)).to.equal(prepared);
    });
  });
});
