/**
 * The Python client (clients/python) in its own process against the running ticketd: IDs/s handed
 * out from a buffered block (next() and next_nowait()), Snowflake IDs/s, and what its pure-Python
 * AES-256 and permutation cost. The Python side checks every ID it measured for repeats.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { InProcessResult } from './in-process.js';

// The bench runs from the repository's root (npm run bench), compiled into dist-bench/.
const CLIENT_DIR = join(process.cwd(), 'clients', 'python');

/** A sequence to measure: its name, how its blocks are described, and a client token when it needs one. */
export interface PythonBenchSequence {
  readonly name: string;
  readonly blocks: string;
  readonly token?: string;
}

/** What the Python part of the bench measured. */
export interface PythonClientResults {
  /** Which interpreter ran it, e.g. "CPython 3.11.2". */
  readonly python: string;
  readonly results: InProcessResult[];
  /** IDs checked for repeats (none found, or the run fails). */
  readonly checked: number;
}

/**
 * Measures the Python client on `sequences` (they must exist) and on two worker pools it creates
 * (bench_py_default, bench_py_wide). `python`: the interpreter (default /usr/bin/python3, Debian's).
 */
export async function runPythonClient(
  ticketdUrl: string,
  adminToken: string,
  sequences: readonly PythonBenchSequence[],
  python = '/usr/bin/python3',
): Promise<PythonClientResults> {
  const specs = sequences.map((s) => `${s.name}:${s.blocks.replace(/:/g, '')}:${s.token ?? ''}`);
  const child = spawn(python, ['bench/measure.py', ticketdUrl, adminToken, ...specs], {
    cwd: CLIENT_DIR,
    env: { ...process.env, PYTHONPATH: join(CLIENT_DIR, 'src'), PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  });
  const line = stdout.trim().split('\n').pop() ?? '';
  if (status !== 0 || !line.startsWith('{'))
    throw new Error(`the Python client bench exited ${status}: ${stderr.slice(-2000)}`);
  const measured = JSON.parse(line) as PythonClientResults;
  for (const r of measured.results) console.log(`  ${r.name}: ${r.idsPerSecond.toLocaleString('en')} IDs/s`);
  console.log(`  (${measured.python}; ${measured.checked.toLocaleString('en')} IDs checked, 0 repeated)`);
  return measured;
}

/** Rows for docs/benchmarks.md's "Python client" section: each Python figure beside the Node SDK's row named `node` (same run). */
export function pythonClientRows(
  measured: PythonClientResults,
  node: readonly InProcessResult[],
  pairs: readonly (readonly [python: string, node: string])[],
): string[] {
  const byName = (rows: readonly InProcessResult[], prefix: string): number | undefined =>
    rows.find((r) => r.name.startsWith(prefix))?.idsPerSecond;
  return pairs.map(([pythonName, nodeName]) => {
    const p = byName(measured.results, pythonName);
    const n = byName(node, nodeName);
    const ratio = p !== undefined && n !== undefined && n > 0 ? `${(p / n).toFixed(2)}×` : '';
    return `| ${pythonName} | ${p?.toLocaleString('en') ?? '—'} | ${n?.toLocaleString('en') ?? '—'} | ${ratio} |`;
  });
}
