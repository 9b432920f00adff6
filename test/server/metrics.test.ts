import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RouteHistogram } from '../../src/server/metrics.js';

describe('the request duration histogram', () => {
  it("writes out what prom-client's own Histogram writes for the same observations", async () => {
    const bounds = [0.001, 0.01, 0.1, 1];
    const theirs = new Registry();
    const ours = new Registry();
    const histogram = new Histogram({ name: 'h_seconds', help: 'Help.', labelNames: ['route'] as const, buckets: bounds, registers: [theirs] });
    const mine = new RouteHistogram('h_seconds', 'Help.', bounds);
    ours.registerMetric(mine as unknown as Histogram);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    const observations: Array<[string, number]> = [
      ['health', 0.0005],
      ['ns_list', 0.001],
      ['health', 0.05],
      ['ns_list', 2],
      ['health', 1],
      ['base_list', 0],
    ];
    for (const [route, seconds] of observations) {
      histogram.labels(route).observe(seconds);
      mine.observe(route, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
