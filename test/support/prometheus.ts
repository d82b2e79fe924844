// Reading a /metrics answer in tests: the text format parsed by parse-prometheus-text-format (which
// throws on any line not of the format), then one sample by name and labels.
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';

export interface Scraped {
  readonly families: PrometheusFamily[];
  /** A counter's or gauge's value for exactly these labels; 0 when the series is absent (not counted yet). */
  value(name: string, labels?: Record<string, string>): number;
  /** A histogram's observation count for these labels (summed over every other label); 0 when absent. */
  histogramCount(name: string, labels?: Record<string, string>): number;
  /** Every label set of a family. */
  labelSets(name: string): Record<string, string>[];
}

const matches = (labels: Record<string, string> | undefined, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([key, value]) => labels?.[key] === value);

export function parseScrape(text: string): Scraped {
  const families = parsePrometheusTextFormat(text);
  const family = (name: string) => families.find((f) => f.name === name);
  return {
    families,
    value(name, labels = {}) {
      const sample = family(name)?.metrics.find((m) => matches(m.labels ?? {}, labels) && Object.keys(m.labels ?? {}).length === Object.keys(labels).length);
      return sample?.value === undefined ? 0 : Number(sample.value);
    },
    histogramCount(name, labels = {}) {
      if (!family(name)) return 0;
      // The package folds a labelled histogram into one sample and drops its labels and counts,
      // so the `_count` lines (whose syntax it has just checked) are read here.
      let count = 0;
      for (const line of text.split('\n')) {
        const sample = /^(\w+)_count(?:\{(.*)\})? (\S+)$/.exec(line);
        if (!sample || sample[1] !== name) continue;
        const sampleLabels = Object.fromEntries([...(sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
        if (matches(sampleLabels, labels)) count += Number(sample[3]);
      }
      return count;
    },
    labelSets(name) {
      return (family(name)?.metrics ?? []).map((m) => m.labels ?? {});
    },
  };
}
