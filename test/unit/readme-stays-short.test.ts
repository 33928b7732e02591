import { readFileSync } from 'node:fs';

/** The README is a five-minute read: longer material lives in docs/ (issue: "The README stays a 5-minute read"). */
it('the README has at most 250 lines, and every docs/ page it names exists', () => {
  const readme = readFileSync('README.md', 'utf8');
  expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  for (const [, page] of readme.matchAll(/\]\((docs\/[a-z-]+\.md)/g))
    expect(() => readFileSync(page!, 'utf8')).not.toThrow();
});
