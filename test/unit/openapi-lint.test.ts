import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from '../../src/http/openapi.js';

/** The document /openapi.json serves passes a third party's linter: @redocly/cli's recommended rules, none turned off. */
it('passes redocly lint with the recommended rules: 0 errors and 0 warnings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(openApiDocument));
    const lint = spawnSync(
      process.execPath,
      ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--extends=recommended', '--format=json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
