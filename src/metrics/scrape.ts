// One scrape, in one process or a cluster: a worker asks the primary, whose aggregator asks every
// worker for its series and merges them (counters summed; gauges read from the database carry
// their own aggregator so that N workers do not count the same runs N times).
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, collectDefaultMetrics } from 'prom-client';
import { metricsRegistry } from './registry.js';

const SCRAPE_ASKED = 'svc:metrics:scrape';
const SCRAPE_ANSWERED = 'svc:metrics:scraped';
const SCRAPE_TIMEOUT_MS = 10_000;

export interface Scrape {
  readonly contentType: string;
  readonly text: string;
}

type ScrapeAnswer = { type: typeof SCRAPE_ANSWERED; id: string; text?: string; error?: string };

let isPrepared = false;
const waiting = new Map<string, (answer: ScrapeAnswer) => void>();

/** Once per process: Node's default series, and in a cluster worker the listeners the primary's aggregator asks. */
export function prepareMetrics(): void {
  if (isPrepared) return;
  isPrepared = true;
  collectDefaultMetrics({ register: metricsRegistry });
  if (!cluster.isWorker) return;
  // Its constructor makes this worker answer the primary's requests for its series.
  new AggregatorRegistry();
  process.on('message', (message: unknown) => {
    if (!isScrapeAnswer(message)) return;
    waiting.get(message.id)?.(message);
  });
}

/** The primary of a cluster: answers its workers' scrapes with every worker's series. */
export function serveClusterScrapes(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== SCRAPE_ASKED) return;
    const id = String((message as { id?: unknown }).id);
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: SCRAPE_ANSWERED, id, text } satisfies ScrapeAnswer),
      (error: unknown) => worker.send({ type: SCRAPE_ANSWERED, id, error: String(error) } satisfies ScrapeAnswer),
    );
  });
}

/** This process's series, or in a cluster worker every worker's (through the primary). */
export async function scrapeMetrics(): Promise<Scrape> {
  const contentType = metricsRegistry.contentType;
  if (!cluster.isWorker || !process.send) return { contentType, text: await metricsRegistry.metrics() };
  const id = randomUUID();
  const answer = await new Promise<ScrapeAnswer>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the cluster primary did not answer the scrape'));
    }, SCRAPE_TIMEOUT_MS);
    waiting.set(id, (received) => {
      clearTimeout(timer);
      waiting.delete(id);
      resolve(received);
    });
    process.send!({ type: SCRAPE_ASKED, id });
  });
  if (answer.text === undefined) throw new Error(`cluster scrape failed: ${answer.error ?? 'no answer'}`);
  return { contentType, text: answer.text };
}

function isScrapeAnswer(message: unknown): message is ScrapeAnswer {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === SCRAPE_ANSWERED;
}
