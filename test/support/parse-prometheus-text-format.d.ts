// The package ships no types: the shape of what it answers, as far as the tests read it.
declare module 'parse-prometheus-text-format' {
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PrometheusSample[];
  }
  /** Throws on a line that is not of the text format. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
