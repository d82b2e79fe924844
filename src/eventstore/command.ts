// Running a command: read the streams it depends on, decide, append with their versions, retry lost races.
import { setTimeout as delay } from 'node:timers/promises';
import { ConflictError, VersionConflictError } from '../kernel/errors.js';
import type { EventStore } from './store.js';
import type { AppendResult, EventMetadata, NewEvent, RecordedEvent } from './types.js';

export interface CommandRun<T> {
  /**
   * Every stream the decision reads; the append expects each at the version read. A function is
   * asked again on every attempt, for commands whose streams depend on state a lost race changed.
   */
  streams: readonly string[] | (() => Promise<readonly string[]>);
  /** Pure: the events per stream (and a result), from the streams' events. May throw AppErrors. */
  decide: (read: ReadonlyMap<string, RecordedEvent[]>) => { events: Record<string, NewEvent[]>; result: T };
  metadata?: EventMetadata;
  /** Lost races are retried on fresh state this many times (default 10) before answering 409. */
  retries?: number;
}

/** `store`: the event store, or a view of it that transforms what is read and appended (iam's sealing of personal values). */
export async function runCommand<T>(store: Pick<EventStore, 'readWholeStream' | 'append'>, run: CommandRun<T>): Promise<{ result: T; appended: AppendResult }> {
  const retries = run.retries ?? 10;
  for (let attempt = 0; ; attempt++) {
    const streams = typeof run.streams === 'function' ? await run.streams() : run.streams;
    const read = new Map<string, RecordedEvent[]>();
    await Promise.all([...new Set(streams)].map(async (stream) => read.set(stream, await store.readWholeStream(stream))));
    const { events, result } = run.decide(read);
    const written = Object.entries(events).filter(([, list]) => list.length > 0);
    const unread = written.find(([streamId]) => !read.has(streamId));
    if (unread) {
      // Streams named from state that moved on before they were read: the race was lost, go again.
      if (typeof run.streams !== 'function') throw new Error(`Command wrote to stream ${unread[0]} without reading it first`);
      if (attempt >= retries) throw new ConflictError('Too many concurrent changes; try again');
      continue;
    }
    const requests = written.map(([streamId, list]) => ({ streamId, expectedVersion: read.get(streamId)!.at(-1)?.streamPosition ?? 0, events: list }));
    if (requests.length === 0) return { result, appended: { versions: {}, events: [] } };
    try {
      return { result, appended: await store.append(requests, run.metadata ? { metadata: run.metadata } : {}) };
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      if (attempt >= retries) throw new ConflictError('Too many concurrent changes; try again');
      // Jittered, growing pauses spread the retries of many writers to one stream (say, a role
      // being assigned to many users at once) so each round lets one of them through.
      await delay(Math.random() * Math.min(2 ** attempt, 50));
    }
  }
}
