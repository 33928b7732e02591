/**
 * The answers the README shows (`# {…}` under its curl lines) have the fields a real server sends:
 * issue 42 found its `blocks` example without `"ids"`.
 */
import { readFileSync } from 'node:fs';
import { useSharedServer } from '../support/ticketd.js';

/** The JSON example shown under the README's first curl line that contains `path`. */
function readmeExample(path: string): Record<string, unknown> {
  const lines = readFileSync('README.md', 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith('curl') && l.includes(path));
  expect(at).toBeGreaterThanOrEqual(0);
  const shown = lines[at + 1]!;
  expect(shown.startsWith('# {')).toBe(true);
  return JSON.parse(shown.slice(2)) as Record<string, unknown>;
}

describe("the README's example answers", () => {
  const context = useSharedServer();

  it.each([
    ['/v1/sequences/default/ids?count=3', 'POST'],
    ['/v1/sequences/default/next', 'GET'],
    ['/v1/sequences/default/blocks', 'POST'],
  ])('%s has the fields the server answers', async (path, method) => {
    const res = await fetch(`${context.server.url}${path}`, { method });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(readmeExample(path)).sort()).toEqual(Object.keys(answer).sort());
  });
});
