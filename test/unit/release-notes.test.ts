/**
 * The release's notes keep up with its version: the CHANGELOG has an entry for the version in
 * package.json (each with an Upgrade line, newest first), and the Kubernetes manifests run the image
 * of that version (docs/releasing.md, step 2).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

it('CHANGELOG.md has an entry for this version, goes back to 0.1.0, newest first, each with an Upgrade line but 0.1.0', () => {
  const changelog = readFileSync('CHANGELOG.md', 'utf8');
  const sections = changelog.split(/^## /m).slice(1);
  const versions = sections.map((s) => s.slice(0, s.indexOf('\n')).trim()).filter((v) => v !== 'Unreleased');
  expect(versions[0]).toBe(version);
  expect(versions[versions.length - 1]).toBe('0.1.0');
  const numbers = versions.map((v) => v.split('.').map(Number) as [number, number, number]);
  for (let i = 1; i < numbers.length; i++)
    expect(numbers[i - 1]![1] * 1000 + numbers[i - 1]![2]).toBeGreaterThan(numbers[i]![1] * 1000 + numbers[i]![2]);
  for (const section of sections.filter((s) => !s.startsWith('0.1.0')))
    expect([section.slice(0, 8), /\*\*Upgrade:\*\*/.test(section)]).toEqual([section.slice(0, 8), true]);
});

it('the Kubernetes manifests name the image of this version', () => {
  const dir = 'deploy/kubernetes';
  const images = readdirSync(dir).flatMap((f) =>
    [...readFileSync(join(dir, f), 'utf8').matchAll(/image: (ticketd:\S+)/g)].map((m) => m[1]),
  );
  expect(images.length).toBeGreaterThan(0);
  expect(new Set(images)).toEqual(new Set([`ticketd:${version}`]));
});
