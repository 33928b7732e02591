import { failureKind } from '../../src/allocator/failure-kind.js';

/** Errors shaped as mysql2 makes them: the server's own carry `sqlMessage` and its error number. */
function serverError(errno: number, sqlMessage: string): Error {
  return Object.assign(new Error(sqlMessage), { errno, sqlMessage });
}

describe('failureKind', () => {
  it('tells an unknown database and a refused login from another answer', () => {
    expect(failureKind(serverError(1049, "Unknown database 'tickets'"))).toBe('unknown-database');
    expect(failureKind(serverError(1045, "Access denied for user 'ticketd'"))).toBe('login-denied');
    expect(failureKind(serverError(1142, 'INSERT command denied'))).toBe('answered');
  });

  it('calls a socket error, or no error object at all, no answer', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { errno: -111 });
    expect(failureKind(refused)).toBe('no-answer');
    expect(failureKind(undefined)).toBe('no-answer');
    expect(failureKind('timeout')).toBe('no-answer');
  });

  it("finds the server's error along the cause chain, but only so deep", () => {
    let wrapped: unknown = serverError(1049, "Unknown database 'tickets'");
    for (let i = 0; i < 4; i++) wrapped = new Error(`wrap ${i}`, { cause: wrapped });
    expect(failureKind(wrapped)).toBe('unknown-database');
    expect(failureKind(new Error('one more', { cause: wrapped }))).toBe('no-answer');
  });
});
