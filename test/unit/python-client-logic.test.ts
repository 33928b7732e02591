/**
 * The Python client's pure logic, by its own test runner (unittest): AES-256 against FIPS-197 and
 * OpenSSL, the opaque permutation and the Snowflake layouts against the shared vectors generated
 * from the TypeScript client (clients/vectors/), and the error codes. Scenario `vectors` of
 * clients/conformance.md.
 */
import { spawnSync } from 'node:child_process';
import { findPython, pythonEnv, pythonMissing, PYTHON_CLIENT_DIR } from '../support/python.js';

const python = findPython();
pythonMissing(python, 'the Python client unit tests');

(python.ok ? test : test.skip)(
  'the Python client reproduces every shared vector and judges its clocks and lease as the Node SDK does (unittest)',
  () => {
    if (!python.ok) return;
    const run = spawnSync(python.command, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
      cwd: PYTHON_CLIENT_DIR,
      env: pythonEnv(),
      encoding: 'utf8',
      timeout: 120_000,
    });
    const ran = /Ran (\d+) tests?/.exec(run.stderr);
    console.log(
      `SCENARIO vectors ${run.status === 0 ? 'ok' : 'FAILED'}: Python ${python.version} (${python.command}), ${ran?.[1] ?? 0} unittest tests`,
    );
    expect(run.status === 0 ? 'passed' : run.stderr.slice(-4000)).toBe('passed');
    expect(Number(ran?.[1])).toBeGreaterThanOrEqual(23);
  },
);
