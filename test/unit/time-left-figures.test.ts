import { formatTimeLeft } from '../../src/http/human-figures.js';

describe('a time left as the status page says it', () => {
  it.each([
    [null, '—'],
    [undefined, '—'],
    [0, 'none'],
    [42.7, '42 s'],
    [119, '119 s'],
    [600, '10 min'],
    [5 * 3600 + 20 * 60 + 5, '5 h 20 min'],
    [3 * 86_400 + 4 * 3600 + 59, '3 d 4 h'],
    [400 * 86_400, '400 days'],
    [12.5 * 365.25 * 86_400, '12 years'],
    [3.07e18, 'over 10,000 years'],
  ])('%p seconds: %p', (seconds, words) => {
    expect(formatTimeLeft(seconds)).toBe(words);
  });
});
