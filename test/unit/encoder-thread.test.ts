import { randomBytes } from 'node:crypto';
import { IdPermutation, KEY_BYTES, type PermutationScheme } from 'ticketd-client';
import { EncoderThread } from '../../src/service/encoder-thread.js';
import { quoteIds } from '../../src/util/decimal.js';

const UINT64_MAX = (1n << 64n) - 1n;

describe('the encoder thread', () => {
  test('computes the same P as this thread, for several sequences and both schemes, in order', async () => {
    const thread = new EncoderThread();
    try {
      for (const scheme of ['feistel-aes256-v1', 'feistel-aes256-v2'] as PermutationScheme[]) {
        const key = randomBytes(KEY_BYTES);
        const domain = { startAfter: 1_000n, maxId: UINT64_MAX };
        const ranges = [
          { first: 5_001n, last: 9_000n },
          { first: 70_001n, last: 70_100n },
        ];
        const out = await thread.encode({ name: `s_${scheme.slice(-2)}`, key, domain, scheme }, ranges);
        const here = new BigUint64Array(4_100);
        const p = new IdPermutation(key, domain, scheme);
        p.encodeRun(5_001n, 4_000, here, 0);
        p.encodeRun(70_001n, 100, here, 4_000);
        // Written as JSON strings, as this thread writes the same IDs.
        expect(out).toEqual(quoteIds(here));
        expect(JSON.parse(`[${Buffer.from(out.bytes).toString('latin1').slice(0, -1)}]`)).toEqual(
          [...here].map(String),
        );
      }
    } finally {
      await thread.close();
    }
  });

  test('after close, fails every call instead of answering', async () => {
    const thread = new EncoderThread();
    const sequence = {
      name: 's',
      key: randomBytes(KEY_BYTES),
      domain: { startAfter: 0n, maxId: UINT64_MAX },
      scheme: 'feistel-aes256-v2' as const,
    };
    await thread.encode(sequence, [{ first: 1n, last: 10n }]);
    await thread.close();
    await expect(thread.encode(sequence, [{ first: 11n, last: 20n }])).rejects.toThrow(/closed/);
  });
});
