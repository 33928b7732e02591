import { spawnSync } from 'node:child_process';

/**
 * `import 'ticketd'` loads the library and does nothing else: no exit hooks, no signal handlers,
 * no timers or sockets keeping the process alive. Runs the build, as a user's `import` would.
 */
describe('importing ticketd', () => {
  it('adds no process listeners and leaves nothing running', () => {
    const script = [
      "const events = ['exit', 'beforeExit', 'SIGTERM', 'SIGINT', 'message'];",
      'const before = events.map((e) => process.listenerCount(e));',
      "import(process.cwd() + '/dist/index.js').then((lib) => {",
      '  const after = events.map((e) => process.listenerCount(e));',
      '  console.log(JSON.stringify({ before, after, resources: process.getActiveResourcesInfo().filter((r) => /Timeout|Immediate|TCP|UDP/.test(r)), exported: typeof lib.startTicketd }));',
      '});',
    ].join('\n');
    // A CommonJS -e script: an ES module one has Node's own exit listener for top-level await.
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    // Timers and sockets only: stdio pipes and a file handle closing are the process's own.
    const seen = JSON.parse(run.stdout) as { before: number[]; after: number[]; resources: string[]; exported: string };
    expect(seen.exported).toBe('function');
    expect(seen.after).toEqual(seen.before);
    expect(seen.after[0]).toBe(0);
    expect(seen.resources).toEqual([]);
  });
});
