// given(history).when(command).then(decision | error) for the IAM decider: state folded from events, no I/O.
import { expect } from 'chai';
import { AppError, type ErrorCode } from '../../src/kernel/errors.js';
import { decide } from '../../src/iam/decide.js';
import type { IamCommand, IamState } from '../../src/iam/commands.js';
import type { Decision } from '../../src/iam/rules.js';
import type { RoleEvent, UniqueValueEvent, UserEvent } from '../../src/iam/events.js';
import { evolveRole, evolveUniqueOwner, evolveUser, initialRole, initialUser } from '../../src/iam/evolve.js';

/** What the streams a command reads hold before it runs. */
export interface History {
  user?: UserEvent[];
  role?: RoleEvent[];
  /** Events of each unique-value claim stream, keyed by stream id. */
  claims?: Record<string, UniqueValueEvent[]>;
  /** Streams of the roles the user holds, keyed by role id (for deleting the user). */
  heldRoles?: Record<string, RoleEvent[]>;
  anyUserExists?: boolean;
}

export function stateOf(history: History): IamState {
  return {
    ...(history.user ? { user: history.user.reduce(evolveUser, initialUser) } : {}),
    ...(history.role ? { role: history.role.reduce(evolveRole, initialRole) } : {}),
    owners: Object.fromEntries(Object.entries(history.claims ?? {}).map(([stream, events]) => [stream, events.reduce<string | null>(evolveUniqueOwner, null)])),
    ...(history.heldRoles
      ? { heldRoles: Object.fromEntries(Object.entries(history.heldRoles).map(([id, events]) => [id, events.reduce(evolveRole, initialRole)])) }
      : {}),
    anyUserExists: history.anyUserExists ?? false,
  };
}

export function given(history: History = {}) {
  return {
    when(command: IamCommand) {
      const run = () => decide(command, stateOf(history));
      return {
        /** The exact events per stream. */
        then(expected: Decision): Decision {
          const decision = run();
          expect(decision).to.deep.equal(expected);
          return decision;
        },
        /** The decision, for assertions of its own. */
        decision(): Decision {
          return run();
        },
        thenFails(code: ErrorCode, message?: RegExp): AppError {
          let caught: unknown;
          let decision: Decision | undefined;
          try {
            decision = run();
          } catch (error) {
            caught = error;
          }
          if (decision) expect.fail(`expected ${code}, got the decision ${JSON.stringify(decision)}`);
          expect(caught).to.be.instanceOf(AppError);
          const appError = caught as AppError;
          expect(appError.code, appError.message).to.equal(code);
          if (message) expect(appError.message).to.match(message);
          return appError;
        },
      };
    },
  };
}
