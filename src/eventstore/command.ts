// Running a command: read the streams it depends on, decide, append with their versions, retry lost races.
import { ConflictError, VersionConflictError } from '../kernel/errors.js';
import type { EventStore } from './store.js';
import type { AppendResult, EventMetadata, NewEvent, RecordedEvent } from './types.js';

export interface CommandRun<T> {
  /** Every stream the decision reads; the append expects each at the version read. */
  streams: readonly string[];
  /** Pure: the events per stream (and a result), from the streams' events. May throw AppErrors. */
  decide: (read: ReadonlyMap<string, RecordedEvent[]>) => { events: Record<string, NewEvent[]>; result: T };
  metadata?: EventMetadata;
  /** Lost races are retried on fresh state this many times before answering 409. */
  retries?: number;
}

export async function runCommand<T>(store: EventStore, run: CommandRun<T>): Promise<{ result: T; appended: AppendResult }> {
  const retries = run.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    const read = new Map<string, RecordedEvent[]>();
    await Promise.all(run.streams.map(async (stream) => read.set(stream, await store.readWholeStream(stream))));
    const { events, result } = run.decide(read);
    const requests = Object.entries(events)
      .filter(([, list]) => list.length > 0)
      .map(([streamId, list]) => {
        const known = read.get(streamId);
        if (!known) throw new Error(`Command wrote to stream ${streamId} without reading it first`);
        return { streamId, expectedVersion: known.at(-1)?.streamPosition ?? 0, events: list };
      });
    if (requests.length === 0) return { result, appended: { versions: {}, events: [] } };
    try {
      return { result, appended: await store.append(requests, run.metadata ? { metadata: run.metadata } : {}) };
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      if (attempt >= retries) throw new ConflictError('Too many concurrent changes; try again');
    }
  }
}
