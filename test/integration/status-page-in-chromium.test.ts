import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { postIds, useSharedServer } from '../support/ticketd.js';

/** Debian's chromium (`apt-get install chromium`); .ci/run installs it. */
const CHROMIUM = process.env.TICKETD_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACT_DIR = 'test-artifacts';
const available = existsSync(CHROMIUM);
if (!available) console.log(`status page browser test not run: no Chromium at ${CHROMIUM} (apt-get install chromium, or set TICKETD_CHROMIUM)`);

(available ? describe : describe.skip)('the status page in headless Chromium', () => {
  const context = useSharedServer();
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
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
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(`${server.url}/`);
    const backends = await page.locator('#backends tr').allInnerTexts();
    for (const b of server.service.backendStatus()) {
      const line = backends.find((r) => r.includes(b.backend));
      expect(line).toBeDefined();
      expect(line).toMatch(/\bup\b/);
    }
    expect(backends.some((r) => r.includes('≡ 1 (mod 2)'))).toBe(true);
    expect(backends.some((r) => r.includes('≡ 0 (mod 2)') || r.includes('≡ 2 (mod 2)'))).toBe(true);
    const sequences = await page.locator('#sequences tr').allInnerTexts();
    expect(sequences.some((r) => r.startsWith('default\t10000\t'))).toBe(true);
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
});
