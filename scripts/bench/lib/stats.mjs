/** Summary statistics of a list of samples: median, min, max, p90 (nearest rank) and MAD (median absolute deviation). */
export function summarize(samples) {
  if (samples.length === 0) return { n: 0, median: NaN, min: NaN, max: NaN, p90: NaN, mad: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const median = medianOf(sorted);
  return {
    n: sorted.length,
    median,
    min: sorted[0],
    max: sorted.at(-1),
    p90: sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)],
    mad: medianOf(sorted.map((x) => Math.abs(x - median)).sort((a, b) => a - b)),
  };
}

function medianOf(sorted) {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function median(samples) {
  return summarize(samples).median;
}
