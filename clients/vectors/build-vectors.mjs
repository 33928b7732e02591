/**
 * The test vectors every ticketd client must reproduce, computed by the TypeScript client itself.
 * The functions it needs are passed in (the built package for generate.mjs, the TypeScript sources
 * for test/unit/client-vectors-match.test.ts), so both read the same code path.
 */
import { createCipheriv, createHash } from 'node:crypto';

const UINT64_MAX = (1n << 64n) - 1n;
const INT64_MAX = (1n << 63n) - 1n;
/** The key test/unit/opaque-permutation.test.ts pins its known answers with. */
const FIXED_KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
/** A second key, so no client can pass with a key schedule that only works for the first. */
const OTHER_KEY = createHash('sha256').update('ticketd client vectors').digest();

/** The domains: tiny, small (tables in the TS client), 32-bit, signed 63-bit and full 64-bit. */
const DOMAINS = [
  ['one ID', 9n, 10n],
  ['two IDs', 9n, 11n],
  ['4,096 (a power of two)', 0n, 4096n],
  ['3,000', 0n, 3000n],
  ['2,049 (cycle-walks most)', 0n, 2049n],
  ['shifted (777, 3778]', 777n, 3778n],
  ['the smallest opaque domain (1,000,000)', 0n, 1_000_000n],
  ['a migrated signed INT (1000000, 2^31-1]', 1_000_000n, 2_147_483_647n],
  ['32-bit (0, 2^32-1]', 0n, 4_294_967_295n],
  ['33-bit (0, 2^32]', 0n, 4_294_967_296n],
  ['signed 63-bit (0, 2^63-1], the default maxId', 0n, INT64_MAX],
  ['full 64-bit (0, 2^64-1]', 0n, UINT64_MAX],
  ['the top of 64 bits (2^64-3002, 2^64-1]', UINT64_MAX - 3001n, UINT64_MAX],
  ['far from zero (2^40, 2^40+5e9]', 1n << 40n, (1n << 40n) + 5_000_000_000n],
];

/** Deterministic picks inside a domain (no Math.random: the files must regenerate identically). */
function picks(startAfter, maxId, count) {
  const size = maxId - startAfter;
  const out = [];
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < count; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & UINT64_MAX;
    out.push(startAfter + 1n + (x % size));
  }
  return out;
}

/** The ordered IDs sampled in a domain: its first ones, a consecutive run, its last ones and some in between. */
function sampleIds(startAfter, maxId) {
  const size = maxId - startAfter;
  if (size <= 64n) return Array.from({ length: Number(size) }, (_, k) => startAfter + 1n + BigInt(k));
  const ids = new Set();
  for (let k = 1n; k <= 10n; k++) ids.add(startAfter + k);
  for (let k = 0n; k < 5n; k++) ids.add(maxId - k);
  for (const id of picks(startAfter, maxId, 12)) ids.add(id);
  return [...ids];
}

function permutationVectors(sdk) {
  const cases = [];
  for (const scheme of Object.keys(sdk.PERMUTATION_SCHEMES)) {
    for (const [keyName, key] of [
      ['fixed', FIXED_KEY],
      ['other', OTHER_KEY],
    ]) {
      for (const [name, startAfter, maxId] of DOMAINS) {
        const p = new sdk.IdPermutation(key, { startAfter, maxId }, scheme);
        const pairs = sampleIds(startAfter, maxId).map((id) => {
          const opaque = p.encode(id);
          if (p.decode(opaque) !== id) throw new Error(`decode(encode(${id})) differs in ${name}`);
          return [String(id), String(opaque)];
        });
        // A run encoded in one batch (encodeRun): a client encoding one at a time must agree with it.
        const runFirst = startAfter + 1n + (maxId - startAfter) / 3n;
        const runLength = Number(maxId - startAfter < 100n ? maxId - runFirst + 1n : 100n);
        const out = new BigUint64Array(runLength);
        p.encodeRun(runFirst, runLength, out, 0);
        cases.push({
          scheme,
          keyName,
          key: key.toString('base64url'),
          keyHex: key.toString('hex'),
          domain: name,
          startAfter: String(startAfter),
          maxId: String(maxId),
          pairs,
          run: { first: String(runFirst), opaque: [...out].map(String) },
          outside: [String(startAfter), String(maxId + 1n)].filter((v) => BigInt(v) >= 0n && BigInt(v) <= UINT64_MAX),
        });
      }
    }
  }
  return {
    about:
      'P (encode) of ordered IDs and back (decode), per scheme, key and domain; IDs are decimal strings. `outside` IDs must be refused with TICKETD_CLIENT_OPAQUE_ID.',
    schemes: Object.fromEntries(
      Object.entries(sdk.PERMUTATION_SCHEMES).map(([name, s]) => [name, { rounds: s.rounds, tag: s.tag }]),
    ),
    keyBytes: sdk.KEY_BYTES,
    refused: {
      code: 'TICKETD_CLIENT_OPAQUE_ID',
      keys: ['AAECAw', FIXED_KEY.subarray(0, 31).toString('base64url')].map((key) => refusedKey(sdk, key)),
      domains: [
        ['5', '5'],
        ['6', '5'],
        ['-1', '10'],
        ['0', '18446744073709551616'],
      ].map(([startAfter, maxId]) => refusedDomain(sdk, startAfter, maxId)),
      schemes: ['feistel-aes256-v0', 'feistel-aes128-v2', ''],
    },
    cases,
  };
}

function refusedKey(sdk, key) {
  try {
    new sdk.IdPermutation(Buffer.from(key, 'base64url'), { startAfter: 0n, maxId: 1000n }, 'feistel-aes256-v2');
  } catch (error) {
    return { key, code: error.code };
  }
  throw new Error(`key ${key} was taken`);
}

function refusedDomain(sdk, startAfter, maxId) {
  try {
    new sdk.IdPermutation(FIXED_KEY, { startAfter: BigInt(startAfter), maxId: BigInt(maxId) }, 'feistel-aes256-v2');
  } catch (error) {
    return { startAfter, maxId, code: error.code };
  }
  throw new Error(`domain (${startAfter}, ${maxId}] was taken`);
}

/** AES-256 of single blocks, by node:crypto (OpenSSL): for clients that implement the cipher themselves. */
function aesVectors() {
  const blocks = [];
  const keys = [FIXED_KEY, OTHER_KEY, Buffer.alloc(32), Buffer.alloc(32, 0xff)];
  for (const key of keys) {
    for (let i = 0; i < 4; i++) {
      const plain = createHash('sha256')
        .update(`block ${i} ${key.toString('hex')}`)
        .digest()
        .subarray(0, 16);
      const cipher = createCipheriv('aes-256-ecb', key, null);
      cipher.setAutoPadding(false);
      blocks.push({
        key: key.toString('hex'),
        plaintext: plain.toString('hex'),
        ciphertext: cipher.update(plain).toString('hex'),
      });
    }
  }
  // FIPS-197 appendix C.3, as printed there: OpenSSL must agree before anything else is trusted.
  const fips = {
    key: FIXED_KEY.toString('hex'),
    plaintext: '00112233445566778899aabbccddeeff',
    ciphertext: '8ea2b7ca516745bfeafc49904b496089',
  };
  const check = createCipheriv('aes-256-ecb', FIXED_KEY, null);
  check.setAutoPadding(false);
  if (check.update(Buffer.from(fips.plaintext, 'hex')).toString('hex') !== fips.ciphertext)
    throw new Error('AES-256 disagrees with FIPS-197 C.3');
  return {
    about:
      'AES-256 (FIPS-197) of single 16-byte blocks, hex, from OpenSSL through node:crypto. The first is FIPS-197 appendix C.3.',
    blocks: [fips, ...blocks],
  };
}

/** The layouts of the vectors: the default, and others a deployment may choose. */
const LAYOUTS = [
  {},
  { timeBits: 39, workerBits: 8, sequenceBits: 16 },
  { timeBits: 42, workerBits: 5, sequenceBits: 16 },
  { timeBits: 48, workerBits: 3, sequenceBits: 12 },
  { timeBits: 31, workerBits: 16, sequenceBits: 16 },
  { sequenceBits: 10 },
];
const EPOCHS = [Date.UTC(2024, 0, 1), Date.UTC(2010, 10, 4, 1, 42, 54, 657), 0];

function snowflakeVectors(layoutModule) {
  const { completeLayout, decompose, firstIdOf, DEFAULT_LAYOUT, DEFAULT_SNOWFLAKE_EPOCH_MS } = layoutModule;
  const cases = [];
  for (const given of LAYOUTS) {
    const layout = completeLayout(given);
    for (const epochMs of EPOCHS) {
      const ids = [];
      const span = 2 ** layout.timeBits;
      const times = [epochMs, epochMs + 1, Date.UTC(2026, 11, 6, 4, 31, 54, 123), epochMs + span - 1].filter(
        (ms) => ms - epochMs >= 0 && ms - epochMs < span,
      );
      for (const ms of times) {
        for (const workerId of [0, 1, 2 ** layout.workerBits - 1]) {
          for (const sequence of [0, 1, 2 ** layout.sequenceBits - 1]) {
            const id = firstIdOf(ms, workerId, layout, epochMs) | BigInt(sequence);
            const parts = decompose(id, layout, epochMs);
            if (parts.timestampMs !== ms || parts.workerId !== workerId || parts.sequence !== sequence)
              throw new Error(`decompose(${id}) differs`);
            ids.push({ timestampMs: ms, workerId, sequence, id: String(id) });
          }
        }
      }
      const outside = [epochMs - 1, epochMs + span].map((ms) => refusedTime(layoutModule, layout, ms, epochMs));
      cases.push({ given, layout: { ...layout }, epochMs, ids, outside });
    }
  }
  const refusedLayouts = [
    { timeBits: 41, workerBits: 10, sequenceBits: 13 },
    { timeBits: 49, workerBits: 2, sequenceBits: 12 },
    { workerBits: 0 },
    { sequenceBits: -1 },
    { timeBits: 40.5 },
  ].map((given) => refusedLayout(layoutModule, given));
  return {
    about:
      'Snowflake IDs: (timestampMs, workerId, sequence) composed by layout and epoch, and taken apart by decompose. `given` layouts are completed with the default widths. Times, layouts outside the rules are refused with TICKETD_CLIENT_SNOWFLAKE_LAYOUT.',
    defaultLayout: { ...DEFAULT_LAYOUT },
    defaultEpochMs: DEFAULT_SNOWFLAKE_EPOCH_MS,
    cases,
    refusedLayouts,
  };
}

function refusedTime({ firstIdOf }, layout, ms, epochMs) {
  try {
    firstIdOf(ms, 0, layout, epochMs);
  } catch (error) {
    return { timestampMs: ms, code: error.code };
  }
  throw new Error(`time ${ms} was taken`);
}

function refusedLayout({ completeLayout }, given) {
  try {
    completeLayout(given);
  } catch (error) {
    return { given, code: error.code };
  }
  throw new Error(`layout ${JSON.stringify(given)} was taken`);
}

/** The client's error codes, by the TypeScript class name: every client raises the same ones. */
function codeVectors(sdk) {
  const classes = [
    'NoBufferedIdsError',
    'StrictSequenceError',
    'LeaseFailedError',
    'OpaqueIdError',
    'NoLeaseError',
    'ClockMovedBackError',
    'ClockSkewError',
    'SnowflakeLayoutError',
  ];
  return {
    about:
      "The client errors' codes by the TypeScript class name; other clients use the same codes (and class names in their own idiom).",
    codes: Object.fromEntries(classes.map((name) => [name, new sdk[name]('vector').code])),
  };
}

/**
 * Every vector file, by file name, as the text written to clients/vectors/.
 * `sdk`: the ticketd-client package; `layoutModule`: its snowflake-layout module (not exported by the package).
 */
export function buildVectors(sdk, layoutModule) {
  const files = {
    'permutation.json': permutationVectors(sdk),
    'aes256.json': aesVectors(),
    'snowflake.json': snowflakeVectors(layoutModule),
    'errors.json': codeVectors(sdk),
  };
  return Object.fromEntries(
    Object.entries(files).map(([name, body]) => [name, `${compact(JSON.stringify(body, null, 1))}\n`]),
  );
}

/** Puts arrays of plain values on one line: the files stay readable and reviewable in a diff. */
function compact(text) {
  return text.replace(
    /\[\n\s*((?:"[^"\n]*"|-?[\d.]+)(?:,\n\s*(?:"[^"\n]*"|-?[\d.]+))*)\n\s*\]/g,
    (_, items) => `[${items.split(/,\n\s*/).join(', ')}]`,
  );
}
