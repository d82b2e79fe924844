// TokenService remembers verified tokens by their exact text: a repeat costs no signature check, yet
// expiry is judged on every use and a token differing by one character is verified (and refused) afresh.
import { expect } from 'chai';
import { UnauthenticatedError } from '../../src/kernel/errors.js';
import { generateSigningKeyHex, loadSigningKeys } from '../../src/iam/keys.js';
import { TokenService } from '../../src/iam/tokens.js';

describe('TokenService: verified tokens', () => {
  let nowMs = Date.parse('2026-11-26T12:00:00Z');
  const clock = { now: () => new Date(nowMs) };

  async function refusal(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
    } catch (error) {
      expect(error).to.be.instanceOf(UnauthenticatedError);
      return (error as Error).message;
    }
    throw new Error('the token was accepted');
  }

  it('answers a repeat from memory, frozen, and refuses it once expired', async () => {
    const service = new TokenService(await loadSigningKeys(generateSigningKeyHex()), 60, clock);
    const { token } = await service.mint({ userId: 'u1', groups: ['g'], scopes: ['runs:read'] });
    const first = await service.verify(token);
    const again = await service.verify(token);
    expect(again, 'the remembered claims').to.equal(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.scopes), 'shared claims cannot be changed').to.equal(true);
    nowMs += 64_000;
    expect((await service.verify(token)).sub, 'within the tolerated skew').to.equal('u1');
    nowMs += 2_000;
    expect(await refusal(service.verify(token))).to.match(/expired/);
  });

  it('verifies a token that differs by one character afresh, and refuses it', async () => {
    const service = new TokenService(await loadSigningKeys(generateSigningKeyHex()), 60, clock);
    const { token } = await service.mint({ userId: 'u2', groups: [], scopes: [] });
    await service.verify(token);
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    const forged = `${token.slice(0, -2)}${last}${token.at(-1)}`;
    expect(await refusal(service.verify(forged))).to.match(/Invalid token/);
    // A token of another key with the same text is impossible; one of another service's key is refused.
    const other = new TokenService(await loadSigningKeys(generateSigningKeyHex()), 60, clock);
    expect(await refusal(other.verify(token))).to.match(/unknown key|bad signature/);
  });
});
