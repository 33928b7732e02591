import { renderChart } from '../../src/http/status-chart.js';
import { overallState } from '../../src/http/status-page.js';
import type { TicketService } from '../../src/service/ticket-service.js';
import { ACTIVITY_SAMPLES, ActivityHistory } from '../../src/service/activity.js';

describe('activity history and its chart', () => {
  it('turns a growing total into IDs per second, keeping the last samples only', () => {
    let now = 0;
    let total = 0;
    const history = new ActivityHistory(
      () => total,
      () => now,
    );
    for (let i = 1; i <= ACTIVITY_SAMPLES + 5; i++) {
      now += 5000;
      total += 500 * i;
      history.sample();
    }
    const points = history.points();
    expect(points).toHaveLength(ACTIVITY_SAMPLES);
    expect(points[points.length - 1]!.idsPerSecond).toBe((500 * (ACTIVITY_SAMPLES + 5)) / 5);
    expect(points[0]!.at).toBe(6 * 5000);
  });

  it('scales the chart to the peak and says so', () => {
    const svg = renderChart([
      { at: 0, idsPerSecond: 0 },
      { at: 5000, idsPerSecond: 50 },
      { at: 10_000, idsPerSecond: 100 },
    ]);
    expect(svg).toContain('points="70.0,100.0 335.0,55.0 600.0,10.0"');
    expect(svg).toContain('latest 100 IDs/s, peak 100 IDs/s, over the last 15 s');
    // The scale: the peak and zero on the left, the span and "now" along the bottom.
    expect(svg).toMatch(/>100\/s<\/text>/);
    expect(svg).toMatch(/>0<\/text>/);
    expect(svg).toMatch(/>−15 s<\/text>/);
    expect(svg).toMatch(/>now<\/text>/);
    expect(renderChart([])).toContain('no samples yet (one every 5 s)');
  });

  it('says ok, degraded or down in words', () => {
    const service = (ready: boolean, states: string[], quarantined: string | null = null) =>
      ({
        ready,
        backendStatus: () => states.map((state, i) => ({ backend: `mysql://db-${i}:3306/t`, name: 'AB'[i], state })),
        servedSequences: () => ['orders'],
        backendsFor: () => states.map((_, i) => ({ backend: `mysql://db-${i}:3306/t`, quarantined, unclaimed: false })),
      }) as unknown as TicketService;
    expect(overallState(service(true, ['up', 'up']))).toEqual({
      state: 'ok',
      words: 'OK: all 2 backends answer; IDs are issued.',
    });
    expect(overallState(service(true, ['up', 'open']))).toEqual({
      state: 'degraded',
      words: 'Degraded: backend B is down; IDs are still issued.',
    });
    expect(overallState(service(true, ['up', 'up'], 'counter went back')).words).toBe(
      'Degraded: backend A is quarantined for 1 sequence and backend B is quarantined for 1 sequence; IDs are still issued.',
    );
    expect(overallState(service(false, ['open', 'open'])).state).toBe('down');
  });

  it('counts sequences instead of naming each, so the sentence does not grow with them', () => {
    const names = Array.from({ length: 40 }, (_, i) => `s${i}`);
    const service = {
      ready: true,
      backendStatus: () => [
        { backend: 'mysql://db-a:3306/t', name: 'A', state: 'up' },
        { backend: 'mysql://db-b:3306/t', name: 'B', state: 'open' },
      ],
      servedSequences: () => names,
      backendsFor: () => [
        { backend: 'mysql://db-a:3306/t', quarantined: null, unclaimed: true },
        { backend: 'mysql://db-b:3306/t', quarantined: null, unclaimed: false },
      ],
    } as unknown as TicketService;
    expect(overallState(service).words).toBe(
      "Degraded: no other backend can record backend A's tickets for 40 sequences and backend B is down; IDs are still issued.",
    );
  });
});
