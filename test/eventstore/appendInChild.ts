// Child process of the cross-process tests: start a kernel on DATABASE_URL, append one event, report it, exit.
import { startTestKernel } from '../support/service.js';

// Whatever happens below, this process does not outlive its test.
setTimeout(() => process.exit(3), 10_000).unref();

const databaseUrl = process.env.DATABASE_URL;
const streamId = process.env.APPEND_STREAM_ID;
if (!databaseUrl || !streamId) throw new Error('DATABASE_URL and APPEND_STREAM_ID are required');

const kernel = await startTestKernel({ databaseUrl });
try {
  const { events } = await kernel.store.append({
    streamId,
    expectedVersion: 'any',
    events: [{ type: 'ChildAppended', data: { pid: process.pid } }],
  });
  const event = events[0]!;
  process.stdout.write(`${JSON.stringify({ globalPosition: event.globalPosition, transactionId: event.transactionId })}\n`);
} finally {
  await kernel.close();
}
