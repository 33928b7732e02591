import { IdPermutation } from 'ticketd-client';
import {
  postIds,
  putSequence,
  runCliAsync,
  sharedBackends,
  TEST_ADMIN_TOKEN,
  useSharedServer,
} from '../support/ticketd.js';

const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

interface Decoded {
  readonly status: number;
  readonly body: { ordered?: string; ticket?: string; backend?: string | null; code?: string; detail?: string };
}

describe('decoding an ID tells whether a block holding it was ever handed out', () => {
  const context = useSharedServer();
  const decode = async (sequence: string, id: bigint | string): Promise<Decoded> => {
    const res = await fetch(`${context.server.url}/v1/sequences/${sequence}/ids/${id}`, { headers: ADMIN });
    return { status: res.status, body: (await res.json()) as Decoded['body'] };
  };

  it('answers issued IDs of an ordered sequence, and 404 TICKETD_ID_NOT_ISSUED for IDs above every last ticket or outside the domain', async () => {
    expect(
      await putSequence(context.server.url, 'decode_ordered', {
        blockSize: 100,
        startAfter: 5000,
        maxId: '1000000000000',
      }),
    ).toBe(201);
    const ids = (await postIds(context.server.url, 'decode_ordered', 250)).map(BigInt);
    for (const id of [ids[0]!, ids[249]!]) {
      const issued = await decode('decode_ordered', id);
      expect(issued.status).toBe(200);
      expect(issued.body.ordered).toBe(String(id));
      expect(issued.body.backend).toMatch(/^mysql:\/\//);
    }
    // The cache fetched whole tickets: the last ID of the last fetched block is as far as "issued" goes.
    for (const never of [ids[249]! + 1_000_000n, 1_000_000_000_000n]) {
      const answer = await decode('decode_ordered', never);
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('TICKETD_ID_NOT_ISSUED');
      expect(answer.body.detail).toMatch(
        new RegExp(
          `^ID ${never} of sequence decode_ordered was never issued: its ticket \\d+ is above mysql://\\S+'s last ticket \\d+$`,
        ),
      );
    }
    for (const outside of [5000n, 1_000_000_000_001n, 0n]) {
      const answer = await decode('decode_ordered', outside);
      expect(answer.status).toBe(404);
      expect(answer.body.detail).toBe(
        `ID ${outside} was never issued: it is outside sequence decode_ordered's domain (5000, 1000000000000]`,
      );
    }
  });

  it('answers issued IDs of an opaque sequence, and 404 for the image of an ordered ID no block has reached', async () => {
    expect(await putSequence(context.server.url, 'decode_opaque', { blockSize: 10_000, ids: 'opaque' })).toBe(201);
    const ids = (await postIds(context.server.url, 'decode_opaque', 3)).map(BigInt);
    const first = await decode('decode_opaque', ids[0]!);
    expect(first.status).toBe(200);
    const { ordered } = first.body;
    // The permutation of the sequence, from its key: the image of an ordered ID far above what was fetched.
    const { key, scheme, maxId } = await context.server.service.settings('decode_opaque');
    const permutation = new IdPermutation(key!, { startAfter: 0n, maxId }, scheme!);
    expect(permutation.decode(ids[0]!)).toBe(BigInt(ordered!));
    const never = permutation.encode(BigInt(ordered!) + 10n ** 12n);
    const answer = await decode('decode_opaque', never);
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('TICKETD_ID_NOT_ISSUED');
    // The CLI says the same in one line.
    const cli = await runCliAsync(['ids', 'decode', 'decode_opaque', String(never)], {
      TICKETD_BACKENDS: sharedBackends(),
    });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toMatch(
      new RegExp(
        `^ticketd: ID ${never} of sequence decode_opaque was never issued: its ticket \\d+ is above mysql://\\S+'s last ticket \\d+ \\(TICKETD_ID_NOT_ISSUED\\)$`,
      ),
    );
    const issued = await runCliAsync(['ids', 'decode', 'decode_opaque', String(ids[1])], {
      TICKETD_BACKENDS: sharedBackends(),
    });
    expect(issued.stdout).toBe(
      `decode_opaque ${ids[1]}: ids=opaque ordered=${BigInt(ordered!) + 1n} ticket=${first.body.ticket} backend=${first.body.backend}\n`,
    );
  });
});
