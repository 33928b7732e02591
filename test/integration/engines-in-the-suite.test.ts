import { testEngines } from '../support/engines.js';

// The conformance set runs on every engine found; under CI both must be there, or the run says
// less than it claims.
describe('the engines the suite runs on', () => {
  it('has MariaDB and Oracle MySQL under CI (elsewhere, says which is missing)', () => {
    const flavors = testEngines().map((e) => e.binary.flavor);
    expect(flavors.length).toBeGreaterThan(0);
    if (process.env.CI !== undefined) {
      expect(flavors).toEqual(expect.arrayContaining(['mariadb', 'mysql']));
    }
  });
});
