/** `ticketd workers`: Snowflake worker pools and their leases, for operators (README, "Snowflake worker IDs"). */
import type { Command } from 'commander';
import { poolSize } from '../core/worker-leases.js';
import { ConfigError } from '../core/errors.js';
import { WorkerPools } from '../service/worker-pools.js';
import type { WithService } from './migrate-commands.js';

interface CreateFlags {
  workerBits?: string;
  ttlMs?: string;
  maxSkewMs?: string;
  reuseDelayMs?: string;
  backends?: string;
  adminBackends?: string;
}

/** Adds `workers create|list|show` to the program. */
export function addWorkerCommands(program: Command, withService: WithService): void {
  const workers = program
    .command('workers')
    .description('Snowflake worker pools: create them, list them, show who holds which worker ID');
  workers
    .command('create <pool>')
    .description('create a worker pool on every backend')
    .option('--worker-bits <n>', 'worker IDs are 0 to 2^n - 1 (default 10)')
    .option('--ttl-ms <n>', 'lease time-to-live in milliseconds (default 30000)')
    .option('--max-skew-ms <n>', "largest difference from the server's clock a holder tolerates (default 1000)")
    .option('--reuse-delay-ms <n>', 'an expired worker ID is free this long after its expiry (default ttl + max skew)')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .option('--admin-backends <urls>', 'accounts for schema changes (TICKETD_ADMIN_BACKENDS)')
    .action(async (name: string, flags: CreateFlags) => {
      const body = {
        ...number('--worker-bits', 'workerBits', flags.workerBits),
        ...number('--ttl-ms', 'ttlMs', flags.ttlMs),
        ...number('--max-skew-ms', 'maxSkewMs', flags.maxSkewMs),
        ...number('--reuse-delay-ms', 'reuseDelayMs', flags.reuseDelayMs),
      };
      await withService(flags, async (allocator) => {
        const { pool, created } = await new WorkerPools({ allocator }).create(name, body);
        console.log(
          `pool ${name} ${created ? 'created' : 'already exists with these settings'}: ${poolSize(pool)} worker IDs (${pool.workerBits} bits), ttl ${pool.ttlMs} ms, max skew ${pool.maxSkewMs} ms, reuse delay ${pool.reuseDelayMs} ms, granted by the backends with offsets ${pool.owners.join(', ')}`,
        );
      });
    });
  workers
    .command('list')
    .description('every pool, with how many worker IDs are leased, cooling down and free')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .action(async (flags: { backends?: string }) => {
      await withService(flags, async (allocator) => {
        const pools = new WorkerPools({ allocator });
        for (const pool of await pools.list()) {
          const s = await pools.state(pool.name);
          const missing = s.unanswered.length === 0 ? '' : `\tunanswered=${s.unanswered.join(',')}`;
          console.log(
            `${pool.name}\tsize=${poolSize(pool)}\tleased=${s.leased}\tcooling=${s.cooling}\tfree=${s.free}\tttlMs=${pool.ttlMs}\tmaxSkewMs=${pool.maxSkewMs}\treuseDelayMs=${pool.reuseDelayMs}${missing}`,
          );
        }
      });
    });
  workers
    .command('show <pool>')
    .description('the leases of a pool: worker ID, owner backend, state, epoch, holder, expiry')
    .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
    .action(async (name: string, flags: { backends?: string }) => {
      await withService(flags, async (allocator) => {
        const s = await new WorkerPools({ allocator }).state(name);
        console.log(
          `pool ${name}: ${s.leased} leased, ${s.cooling} cooling down, ${s.free} free of ${poolSize(s.pool)}${s.unanswered.length === 0 ? '' : `; not counted (no answer): ${s.unanswered.join(', ')}`}`,
        );
        for (const l of s.leases)
          console.log(
            `worker ${l.workerId}\t${l.state}\tepoch=${l.epoch}\tholder=${l.holder}\texpires=${l.expiresAt}\tfree=${l.freeAt}\towner=${l.owner}`,
          );
      });
    });
}

function number(flag: string, key: string, value: string | undefined): Record<string, number> {
  if (value === undefined) return {};
  if (!/^[0-9]+$/.test(value)) throw new ConfigError(`${flag} must be a whole number; got ${JSON.stringify(value)}`);
  return { [key]: Number(value) };
}
