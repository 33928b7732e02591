/** The status page's chart of IDs issued per second (status-page.ts places it). */
import { ACTIVITY_SAMPLE_MS, type ActivityPoint } from '../service/activity.js';
import { escapeHtml, formatRate, formatSpan } from './human-figures.js';

const CHART_WIDTH = 600;
const CHART_HEIGHT = 120;
/** Room left of and below the plot for the axis labels. */
const AXIS_LEFT = 70;
const AXIS_BOTTOM = 20;

/** An inline SVG line chart of the activity points with a labelled scale: 0 to the peak, oldest to now. */
export function renderChart(points: readonly ActivityPoint[]): string {
  const max = Math.max(1, ...points.map((p) => p.idsPerSecond));
  const plotWidth = CHART_WIDTH - AXIS_LEFT;
  const plotHeight = CHART_HEIGHT - AXIS_BOTTOM;
  const step = points.length > 1 ? plotWidth / (points.length - 1) : 0;
  const coords = points
    .map(
      (p, i) =>
        `${(AXIS_LEFT + i * step).toFixed(1)},${(plotHeight - (p.idsPerSecond / max) * (plotHeight - 10)).toFixed(1)}`,
    )
    .join(' ');
  const latest = points[points.length - 1];
  const span = formatSpan(points.length * (ACTIVITY_SAMPLE_MS / 1000));
  const caption =
    points.length === 0
      ? `no samples yet (one every ${ACTIVITY_SAMPLE_MS / 1000} s)`
      : `latest ${formatRate(latest!.idsPerSecond)} IDs/s, peak ${formatRate(max)} IDs/s, over the last ${span}`;
  const peakY = 10;
  const axis = `<g class="axis" font-size="11" fill="#555" stroke="#bbb">
<line x1="${AXIS_LEFT}" y1="0" x2="${AXIS_LEFT}" y2="${plotHeight}"/><line x1="${AXIS_LEFT}" y1="${plotHeight}" x2="${CHART_WIDTH}" y2="${plotHeight}"/>
<line x1="${AXIS_LEFT}" y1="${peakY}" x2="${CHART_WIDTH}" y2="${peakY}" stroke-dasharray="3,3"/>
<text x="${AXIS_LEFT - 6}" y="${peakY + 4}" text-anchor="end" stroke="none">${escapeHtml(formatRate(max))}/s</text>
<text x="${AXIS_LEFT - 6}" y="${plotHeight}" text-anchor="end" stroke="none">0</text>
<text x="${AXIS_LEFT}" y="${CHART_HEIGHT - 4}" stroke="none">${points.length === 0 ? '' : `−${escapeHtml(span)}`}</text>
<text x="${CHART_WIDTH - 2}" y="${CHART_HEIGHT - 4}" text-anchor="end" stroke="none">now</text>
</g>`;
  return `<svg id="ids-per-second" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" role="img" aria-label="IDs issued per second">
${axis}
<polyline fill="none" stroke="#2b6cb0" stroke-width="2" points="${coords}"/></svg>
<p class="muted" id="chart-caption">${escapeHtml(caption)}</p>`;
}
