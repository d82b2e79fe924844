// IAM commands: each a small pure function from command + current state to the events of each stream.
import { userStream } from './events.js';
import type { IamCommand, IamState } from './commands.js';
import { assignRole, bootstrap, changeRoleScopes, createRole, deleteRole, revokeRole } from './decideRoles.js';
import { createUser, deleteUser, eraseUser, linkFederation, recordSignIn, updateUser } from './decideUsers.js';
import { sessionsEnded, type Decision } from './rules.js';

export function decide(command: IamCommand, state: IamState): Decision {
  switch (command.type) {
    case 'CreateUser':
      return createUser(command, state);
    case 'UpdateUser':
      return updateUser(command, state);
    case 'DeleteUser':
      return deleteUser(command, state);
    case 'EraseUser':
      return eraseUser(command, state);
    case 'AssignRole':
      return assignRole(command, state);
    case 'RevokeRole':
      return revokeRole(command, state);
    case 'EndSessions':
      return { [userStream(command.userId)]: [sessionsEnded(command.userId, command.at, command.reason)] };
    case 'LinkFederation':
      return linkFederation(command, state);
    case 'RecordSignIn':
      return recordSignIn(command, state);
    case 'CreateRole':
      return createRole(command, state);
    case 'ChangeRoleScopes':
      return changeRoleScopes(command, state);
    case 'DeleteRole':
      return deleteRole(command, state);
    case 'Bootstrap':
      return bootstrap(command, state);
    default: {
      const unknown: never = command;
      throw new Error(`Unknown IAM command ${JSON.stringify(unknown)}`);
    }
  }
}
