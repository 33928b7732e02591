import * as errors from '../../src/core/errors.js';
import { toProblem } from '../../src/http/problem.js';

/** Errors carry a code only; the HTTP layer's one table gives each its status and problem type. */
describe('problem types', () => {
  type Concrete = new (message: string) => errors.TicketdError;
  const classes = (Object.values(errors) as unknown[]).filter(
    (value): value is Concrete => typeof value === 'function' && value.prototype instanceof errors.TicketdError,
  );

  it('maps every ticketd error to a status and a problem type of its own', () => {
    expect(classes.length).toBeGreaterThanOrEqual(21);
    for (const ErrorClass of classes) {
      const error = new ErrorClass('x');
      const problem = toProblem(error);
      expect([error.code, problem.type]).not.toEqual([error.code, '/problems/internal']);
      expect(problem.code).toBe(error.code);
      expect(problem.status).toBeGreaterThanOrEqual(400);
      expect(Object.keys(error)).not.toContain('status');
    }
  });

  it('keeps the statuses of the contract', () => {
    expect(toProblem(new errors.SequenceNotFoundError('x'))).toMatchObject({
      status: 404,
      type: '/problems/sequence-not-found',
      title: 'Not Found',
    });
    expect(toProblem(new errors.BackendsUnavailableError('x'))).toMatchObject({
      status: 503,
      type: '/problems/backends-unavailable',
    });
    expect(toProblem(new errors.SequenceExhaustedError('x'))).toMatchObject({ status: 409 });
    expect(toProblem(new errors.BadRequestError('x'))).toMatchObject({ status: 400, code: 'TICKETD_BAD_REQUEST' });
    expect(toProblem(new Error('secret'))).toMatchObject({
      status: 500,
      code: 'TICKETD_INTERNAL',
      detail: 'internal error; see the server log',
    });
  });
});
