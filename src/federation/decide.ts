// Who a federated login is (pure): the linked account, an account to link by verified email, or a new one.
import { PermissionDeniedError } from '../kernel/errors.js';
import type { AccountRow } from '../iam/queries.js';
import type { FederatedProfile } from './oauth.js';

export type FederatedDecision = { action: 'login'; userId: string } | { action: 'link'; userId: string } | { action: 'create'; email: string };

export function decideFederatedLogin(
  allowedDomains: readonly string[],
  profile: FederatedProfile,
  byIdentity: AccountRow | undefined,
  byEmail: AccountRow | undefined,
): FederatedDecision {
  // Only an address the provider vouches for says which organisation the person belongs to.
  const domain = profile.emailVerified ? profile.email?.split('@').pop()?.toLowerCase() : undefined;
  if (allowedDomains.length > 0 && (!domain || !allowedDomains.includes(domain))) {
    throw new PermissionDeniedError('This email domain may not sign in here');
  }
  if (byIdentity) {
    if (!byIdentity.is_active) throw new PermissionDeniedError('This account is disabled');
    return { action: 'login', userId: byIdentity.id };
  }
  if (byEmail) {
    // Never key on email alone: only an address the provider vouches for may take over an account.
    if (!profile.emailVerified)
      throw new PermissionDeniedError('An account with this email exists; the provider did not verify the email, so it cannot be linked');
    if (byEmail.federated_provider !== null) throw new PermissionDeniedError('An account with this email is already linked to another identity');
    if (!byEmail.is_active) throw new PermissionDeniedError('This account is disabled');
    return { action: 'link', userId: byEmail.id };
  }
  if (!profile.email) throw new PermissionDeniedError('The provider gave no email address for this account');
  return { action: 'create', email: profile.email };
}
