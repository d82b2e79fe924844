// The chain walk's hashing threads: pages go out round robin; each thread answers its pages in order.
import { Worker } from 'node:worker_threads';
import type { PageJob, PageResult } from './chainLink.js';

interface Waiting {
  resolve: (result: PageResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Built, the thread runs chainWorker.js beside this file. Under tsx (tests, benchmarks) the sources
 * are .ts, and a thread does not inherit tsx's loader: it registers it (resolved from the working
 * directory, the repository's) before importing the file.
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./chainWorker.js', import.meta.url));
  const entry = new URL('./chainWorker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { eval: true });
}

export class HashingThreads {
  private readonly threads: { worker: Worker; waiting: Waiting[] }[];
  private next = 0;

  constructor(count: number) {
    this.threads = Array.from({ length: count }, () => {
      const thread = { worker: startWorker(), waiting: [] as Waiting[] };
      thread.worker.on('message', (result: PageResult) => thread.waiting.shift()?.resolve(result));
      thread.worker.on('error', (error) => thread.waiting.splice(0).forEach((w) => w.reject(error)));
      return thread;
    });
  }

  check(job: PageJob): Promise<PageResult> {
    const thread = this.threads[this.next++ % this.threads.length]!;
    return new Promise((resolve, reject) => {
      thread.waiting.push({ resolve, reject });
      thread.worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
