import { TEST_ADMIN_TOKEN } from './ticketd.js';

/**
 * What one front end tells operators at one moment: its /readyz (with the admin token) and its
 * status page (overall state and the backends table), for tests that check they agree.
 */
export interface FrontEndStatus {
  readonly url: string;
  readonly readyz: {
    readonly ready: boolean;
    readonly backends: readonly { state: string; failing: boolean; lastError?: string; lastErrorAt?: string }[];
  };
  readonly page: {
    readonly overall: string;
    readonly words: string;
    /** Per backend row: its status cell and its last-error cell. */
    readonly rows: readonly { status: string; lastError: string }[];
  };
}

/** Reads /readyz (admin) and the status page of a front end. */
export async function frontEndStatus(url: string): Promise<FrontEndStatus> {
  const readyz = (await (
    await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })
  ).json()) as FrontEndStatus['readyz'];
  const html = await (await fetch(`${url}/`)).text();
  const overall = /<p id="overall" class="(\w+)">([^<]*)<\/p>/.exec(html);
  const table = /<table id="backends">(.*?)<\/table>/s.exec(html)?.[1] ?? '';
  const rows = [...table.matchAll(/<tr(?: class="\w*")?>((?:<td>[^<]*<\/td>)+)<\/tr>/g)].map((m) => {
    const cells = [...m[1]!.matchAll(/<td>([^<]*)<\/td>/g)].map((c) => c[1]!);
    return { status: cells[1] ?? '', lastError: cells[5] ?? '' };
  });
  return { url, readyz, page: { overall: overall?.[1] ?? '', words: overall?.[2] ?? '', rows } };
}

/** The status column's words for a /readyz state (src/http/status-page.ts: stateWords). */
function wordsOf(state: string): string {
  if (state === 'up' || state === 'refused') return state;
  return state === 'unknown' ? 'not asked yet' : 'down';
}

/**
 * Why the front ends' views disagree (with their backend rows, or with the states allowed for each
 * backend), or undefined when they all tell the same: the page says OK only when every
 * backend is up, each row says what /readyz says, and an error is shown, with its time, exactly
 * while its backend is failing.
 */
export function statusDisagreement(
  views: readonly FrontEndStatus[],
  expected: readonly (readonly string[])[],
): string | undefined {
  for (const v of views) {
    const states = v.readyz.backends.map((b) => b.state);
    if (states.length !== expected.length || states.some((s, i) => !expected[i]!.includes(s)))
      return `${v.url}: /readyz says ${states.join(', ')}`;
    const rows = v.page.rows.map((r) => r.status);
    if (rows.join() !== states.map(wordsOf).join()) return `${v.url}: the page's rows say ${rows.join(', ')}`;
    const allUp = states.every((s) => s === 'up');
    if ((v.page.overall === 'ok') !== allUp) return `${v.url}: the page says "${v.page.words}" with ${states.join()}`;
    for (const [i, b] of v.readyz.backends.entries()) {
      if (b.failing !== (b.state !== 'up' && b.state !== 'unknown'))
        return `${v.url}: backend ${i} failing=${b.failing}`;
      const shown = v.page.rows[i]?.lastError ?? '';
      if (b.failing && !/^\d{4}-\d\d-\d\dT[\d:.]+Z: /.test(shown)) return `${v.url}: row ${i} shows "${shown}"`;
      if (!b.failing && shown !== '') return `${v.url}: row ${i} still shows "${shown}"`;
    }
  }
  return undefined;
}
