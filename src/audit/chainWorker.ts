// A hashing thread of the chain walk: checks the pages it is sent, in order, and answers each result.
import { parentPort } from 'node:worker_threads';
import { checkPage, type PageJob } from './chainLink.js';

const memory = new Map<string, string>();
parentPort!.on('message', (job: PageJob) => parentPort!.postMessage(checkPage(job, memory)));
