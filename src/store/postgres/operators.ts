import type pg from 'pg';
import type { OperatorStore } from '../operators.js';

/** Not on PostgreSQL yet: the next commit keeps operators there too. Until then every method fails with the reason. */
export function postgresOperators(_pool: pg.Pool): OperatorStore {
  const notYet = async (): Promise<never> => {
    throw new Error(
      'postgres store: operators (users, tokens, sessions, the audit log) are not kept on PostgreSQL yet',
    );
  };
  return {
    addUser: notYet,
    findUser: notYet,
    listUsers: notYet,
    setRole: notYet,
    removeUser: notYet,
    setPassword: notYet,
    addPasswordLink: notYet,
    checkPasswordLink: notYet,
    usePasswordLink: notYet,
    addToken: notYet,
    listTokens: notYet,
    findToken: notYet,
    touchToken: notYet,
    revokeToken: notYet,
    addSession: notYet,
    findSession: notYet,
    endSession: notYet,
    appendAudit: notYet,
    listAudit: notYet,
    expireAudit: notYet,
  };
}
