import { describe, expect, it } from 'vitest';

import { lineChartSvg } from '../../src/report/plot.js';

describe('lineChartSvg', () => {
  it('draws a path per series, breaks it at non-finite points, and shades the bands behind', () => {
    const svg = lineChartSvg(
      'rate <ok>',
      'time (s)',
      'ops/s',
      [
        {
          name: 'ok',
          points: [
            [0, 1],
            [1, 2],
            [2, Number.NaN],
            [3, 4],
            [4, 5],
          ],
          dashed: true,
        },
      ],
      { bands: [{ from: 1, to: 2, kind: 'kill', label: 'kill n1', color: '#777' }] },
    );
    expect(svg).toContain('<svg xmlns="http://www.w3.org/2000/svg" class="plot"');
    expect(svg).toContain('rate &#60;ok&#62;');
    const d = /<path class="series" d="([^"]*)"/.exec(svg)![1];
    expect(d.match(/M/g)).toHaveLength(2);
    expect(d.match(/L/g)).toHaveLength(2);
    expect(svg).toContain('stroke-dasharray');
    expect(svg.indexOf('class="band"')).toBeLessThan(svg.indexOf('class="series"'));
    expect(svg).toContain('<title>kill n1</title>');
  });

  it('keeps a short band visible and clips x to xMax', () => {
    const svg = lineChartSvg(
      't',
      'x',
      'y',
      [
        {
          name: 'a',
          points: [
            [0, 0],
            [100, 1],
          ],
        },
      ],
      {
        xMax: 10,
        bands: [{ from: 5, to: 5, kind: 'pause', label: 'p', color: '#00f' }],
      },
    );
    expect(Number(/class="band" x="[^"]*" y="[^"]*" width="([^"]*)"/.exec(svg)![1])).toBeGreaterThan(1);
    expect(svg).not.toMatch(/L(\d{4,})/);
  });
});
