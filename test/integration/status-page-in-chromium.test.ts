import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { postIds, startInProcess, startPrivatePair, useSharedServer } from '../support/ticketd.js';
import { poolName, putPool, takeLease } from '../support/worker-pools.js';

/** Debian's chromium (`apt-get install chromium`); .ci/run installs it. */
const CHROMIUM = process.env.TICKETD_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACT_DIR = 'test-artifacts';
const available = existsSync(CHROMIUM);
if (!available)
  console.log(
    `status page browser test not run: no Chromium at ${CHROMIUM} (apt-get install chromium, or set TICKETD_CHROMIUM)`,
  );

// CI installs Chromium (.ci/run): there, a missing browser is a failure, not a quiet skip.
if (!available && process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false') {
  it('has Chromium in CI', () => {
    throw new Error(`CI is set but there is no Chromium at ${CHROMIUM}: .ci/run should have installed it`);
  });
}

(available ? describe : describe.skip)('the status page in headless Chromium', () => {
  const context = useSharedServer();
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows both backends, a sequence and a chart of IDs per second, and refreshes itself', async () => {
    const { server } = context;
    server.activity.sample();
    for (let i = 0; i < 4; i++) {
      await postIds(server.url, 'default', 500);
      await new Promise((r) => setTimeout(r, 50));
      server.activity.sample();
    }
    const pool = poolName('status');
    await putPool(server.url, pool, { workerBits: 3 });
    await takeLease(server.url, pool, 'pod-a');
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(`${server.url}/`);
    // Worker pools: counts only (holders are the admin's to see).
    // The last column: how long the clients' default time field lasts (41 bits from 2024-01-01).
    expect(await page.locator('#pools tr').allInnerTexts()).toContainEqual(
      expect.stringMatching(
        new RegExp(`^${pool}\t8\t1\t0\t7\t30 s\t\t\\d+ years, until 2093-09-06 \\(2024-01-01, 41 bits\\)$`),
      ),
    );
    const backends = await page.locator('#backends tr').allInnerTexts();
    // Open to all: backends by letter, never their address.
    for (const letter of ['A', 'B']) expect(backends.find((r) => r.startsWith(`${letter}\t`))).toMatch(/\bup\b/);
    for (const b of server.service.backendStatus())
      expect(await page.content()).not.toContain(b.backend.replace('mysql://', ''));
    expect(backends.some((r) => r.includes('odd tickets'))).toBe(true);
    expect(backends.some((r) => r.includes('even tickets'))).toBe(true);
    expect(await page.locator('#overall').innerText()).toBe('OK: all 2 backends answer; IDs are issued.');
    expect(await page.locator('#overall').getAttribute('class')).toBe('ok');
    expect(await page.locator('h1').innerText()).toMatch(/^ticketd \d+\.\d+\.\d+$/);
    expect(await page.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual([
      '/metrics',
      '/readyz',
      '/openapi.json',
    ]);
    const sequences = await page.locator('#sequences tr').allInnerTexts();
    // Numbers with thousands separators.
    expect(sequences.some((r) => /^default\tordered\t10,000\t\d{1,3}(,\d{3})*\t/.test(r))).toBe(true);
    const points = (await page.locator('#ids-per-second polyline').getAttribute('points'))!.trim().split(' ');
    expect(points.length).toBeGreaterThanOrEqual(4);
    expect(await page.locator('#chart-caption').innerText()).toMatch(/^latest [0-9.,]+ IDs\/s, peak [0-9.,]+ IDs\/s/);
    mkdirSync(ARTIFACT_DIR, { recursive: true });
    await page.screenshot({ path: `${ARTIFACT_DIR}/status-page.png`, fullPage: true });
    expect(existsSync(`${ARTIFACT_DIR}/status-page.png`)).toBe(true);
    // It reloads by itself (meta refresh every 5 s).
    await page.waitForEvent('load', { timeout: 8000 });
    await page.close();
  });

  it('says degraded, naming the backend, while one backend is stopped', async () => {
    const pair = await startPrivatePair();
    const server = await startInProcess(pair.backendsUrl);
    try {
      await postIds(server.url, 'default', 10);
      pair.b.signal('SIGKILL');
      await pair.b.exited();
      // Refills find B gone; its breaker opens, and A keeps issuing.
      for (let i = 0; i < 30 && server.service.backendStatus()[1]!.state !== 'open'; i++)
        await postIds(server.url, 'default', 10_000);
      const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
      await page.goto(`${server.url}/`);
      const overall = page.locator('#overall');
      expect(await overall.getAttribute('class')).toBe('degraded');
      // B is down, and A's tickets have no peer left to claim them (served on the marks: the default).
      expect(await overall.innerText()).toBe(
        "Degraded: no other backend can record backend A's tickets for 1 sequence and backend B is down; IDs are still issued.",
      );
      await page.screenshot({ path: `${ARTIFACT_DIR}/status-page-degraded.png`, fullPage: true });
      // B's last error, with its time, and no address or driver text in it (the admin's /readyz has those).
      const rowOfB = async (): Promise<string> =>
        (await page.locator('#backends tr').allInnerTexts()).find((r) => r.startsWith('B\t'))!;
      expect(await rowOfB()).toMatch(
        /\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z: failed \(the error is shown with the admin token\)$/,
      );
      expect(await page.content()).not.toMatch(/ECONNREFUSED|127\.0\.0\.1:\d+/);
      // Once B is back, its row shows no error: an error of the past is not its state.
      await pair.b.restart();
      for (let i = 0; i < 60 && server.service.backendStatus()[1]!.state !== 'up'; i++) {
        await postIds(server.url, 'default', 10_000);
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(server.service.backendStatus()[1]!.state).toBe('up');
      await page.goto(`${server.url}/`);
      expect(await rowOfB()).toMatch(/\bup\b/);
      expect(await rowOfB()).not.toMatch(/failed|Z:/);
      await page.close();
    } finally {
      await server.close();
      await pair.dispose();
    }
  });
});
