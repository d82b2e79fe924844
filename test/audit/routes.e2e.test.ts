// /admin/audit over HTTP: scope audit:read to read, iam:admin to checkpoint on demand; the JWS verifies with /auth/jwks.json alone.
import { expect } from 'chai';
import { compactVerify, createLocalJWKSet } from 'jose';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client, expectError, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { waitUntil } from '../eventstore/helpers.js';

describe('audit routes', () => {
  let service: Service;
  let admin: Admin;

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('lets audit:read verify and list, only iam:admin checkpoint, and nobody else in', async () => {
    const auditor = await createUser(service.url, admin.token, 'auditor@example.com', { auditors: ['audit:read'] });
    const other = await createUser(service.url, admin.token, 'other@example.com', { readers: ['runs:read'] });
    expectError(await client(service.url, other.token).get('/admin/audit/verify'), 403);
    expectError(await client(service.url, auditor.token).post('/admin/audit/checkpoints'), 403);

    const written = await client(service.url, admin.token).post('/admin/audit/checkpoints');
    expect(written.status).to.equal(201);
    const { checkpoint } = written.body;
    expect(checkpoint).to.include({ sequence: 1, previous_digest: '0'.repeat(64) });

    const listed = await client(service.url, auditor.token).get('/admin/audit/checkpoints');
    expect(listed.status).to.equal(200);
    expect(listed.body.checkpoints).to.have.length(1);
    expect(listed.body.checkpoints[0]).to.deep.include({ ...checkpoint, hash: listed.body.checkpoints[0].hash });

    const jwks = (await client(service.url).get('/auth/jwks.json')).body;
    const { protectedHeader } = await compactVerify(checkpoint.jws, createLocalJWKSet(jwks));
    expect(protectedHeader).to.deep.include({ alg: 'EdDSA', kid: jwks.keys[0].kid });

    const report = await client(service.url, auditor.token).get('/admin/audit/verify');
    expect(report.status).to.equal(200);
    expect(report.body).to.deep.include({ ok: true, checkpoints_checked: 1, first_broken: null });
    expect(report.body.events_checked).to.be.greaterThan(1);
  });

  it('signs checkpoints by itself every SVC_AUDIT_CHECKPOINT_SECONDS while events arrive, and none of checkpoints alone', async () => {
    const timed = await startTestService({ env: { SVC_AUDIT_CHECKPOINT_SECONDS: '1' } });
    try {
      const timedAdmin = await bootstrapAdmin(timed.url);
      const api = client(timed.url, timedAdmin.token);
      const checkpoints = async () => (await api.get('/admin/audit/checkpoints')).body.checkpoints as { sequence: number; events: number }[];
      await waitUntil(async () => (await checkpoints()).length >= 1, 15_000, 'a timed checkpoint');
      // Idle: once the gate passed every event, the ticks see only checkpoints and write nothing more.
      let settled = (await checkpoints()).length;
      await waitUntil(
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 2500));
          const now = (await checkpoints()).length;
          const isStable = now === settled;
          settled = now;
          return isStable;
        },
        30_000,
        'the checkpoints to stop while nothing arrives',
      );
      await createUser(timed.url, timedAdmin.token, 'late@example.com');
      await waitUntil(async () => (await checkpoints()).length > settled, 15_000, 'a checkpoint of the new events');
      expect((await api.get('/admin/audit/verify')).body).to.deep.include({ ok: true, first_broken: null });
    } finally {
      await timed.close();
    }
  });
});
