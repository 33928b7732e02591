/** Settling a strict lease operation on the first majority (service/strict-quorum.ts), with answers held back at will. */
import type { Answer } from '../../src/allocator/key-agreement.js';
import { firstMajority, quorumFailures } from '../../src/service/strict-quorum.js';

/** An answer that comes when the test says so. */
function later<T>(): { promise: Promise<Answer<T>>; answer(a: Answer<T>): void } {
  let answer: (a: Answer<T>) => void = () => undefined;
  const promise = new Promise<Answer<T>>((r) => (answer = r));
  return { promise, answer };
}

const yes = (backend: string): Answer<boolean> => ({ backend, ok: true, value: true });
const no = (backend: string): Answer<boolean> => ({ backend, ok: true, value: false });
const failed = (backend: string): Answer<boolean> => ({ backend, ok: false, error: new Error('connect ETIMEDOUT') });
const counts = (a: Answer<boolean>): boolean => a.ok && a.value;

describe('the first majority of a strict lease operation', () => {
  it('settles on two of three while the third (hung) has not answered, and hands its late answer over only in `all`', async () => {
    const [a, b, c] = [later<boolean>(), later<boolean>(), later<boolean>()];
    const settled = firstMajority([a.promise, b.promise, c.promise], counts);
    a.answer(yes('A'));
    b.answer(yes('B'));
    const quorum = await settled;
    expect(quorum.reached).toBe(true);
    expect(quorum.answers.map((x) => x.backend)).toEqual(['A', 'B']);
    c.answer(no('C'));
    expect((await quorum.all).map((x) => x.backend)).toEqual(['A', 'B', 'C']);
    // What came after the outcome changes nothing about it.
    expect(quorum.answers).toHaveLength(2);
  });

  it('fails as soon as a majority is out of reach, without waiting for the rest', async () => {
    const [a, b, c] = [later<boolean>(), later<boolean>(), later<boolean>()];
    const settled = firstMajority([a.promise, b.promise, c.promise], counts);
    b.answer(failed('B'));
    c.answer(no('C'));
    const quorum = await settled;
    expect(quorum.reached).toBe(false);
    expect(quorumFailures(quorum)).toBe('B: connect ETIMEDOUT; 1 had not answered');
  });

  it('waits while a majority is still possible, and counts only what counts', async () => {
    const [a, b, c] = [later<boolean>(), later<boolean>(), later<boolean>()];
    let outcome: boolean | undefined;
    const settled = firstMajority([a.promise, b.promise, c.promise], counts).then((q) => (outcome = q.reached));
    a.answer(no('A'));
    b.answer(yes('B'));
    await new Promise((r) => setTimeout(r, 10));
    expect(outcome).toBeUndefined();
    c.answer(yes('C'));
    await settled;
    expect(outcome).toBe(true);
  });

  it('counts a rejected answer as a miss, and reaches no majority of no backend', async () => {
    const quorum = await firstMajority([Promise.reject(new Error('boom')), Promise.resolve(yes('B'))], counts);
    expect(quorum.reached).toBe(false);
    expect((await firstMajority<boolean>([], counts)).reached).toBe(false);
    expect((await firstMajority([Promise.resolve(yes('A'))], counts)).reached).toBe(true);
  });
});
