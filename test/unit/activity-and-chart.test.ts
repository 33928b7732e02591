import { renderChart } from '../../src/http/status-page.js';
import { ACTIVITY_SAMPLES, ActivityHistory } from '../../src/service/activity.js';

describe('activity history and its chart', () => {
  it('turns a growing total into IDs per second, keeping the last samples only', () => {
    let now = 0;
    let total = 0;
    const history = new ActivityHistory(() => total, () => now);
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
    expect(svg).toContain('points="0.0,120.0 300.0,65.0 600.0,10.0"');
    expect(svg).toContain('latest 100 IDs/s, peak 100 IDs/s, over the last 15 s');
    expect(renderChart([])).toContain('no samples yet (one every 5 s)');
  });
});
