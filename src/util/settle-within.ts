/** Waits for promises until all settle or the time runs out; returns the values that arrived. */
export function settleWithin<T>(promises: readonly Promise<T>[], waitMs: number): Promise<T[]> {
  const values: T[] = [];
  let settled = 0;
  return new Promise((resolve) => {
    const done = (): void => resolve([...values]);
    if (promises.length === 0) {
      done();
      return;
    }
    const timer = setTimeout(done, waitMs);
    for (const promise of promises) {
      promise
        .then(
          (value) => void values.push(value),
          () => undefined,
        )
        .finally(() => {
          if (++settled === promises.length) {
            clearTimeout(timer);
            done();
          }
        });
    }
  });
}
