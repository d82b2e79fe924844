// Runs that stay open until a test releases them (test/auth/fixtures/streams), and streams that follow them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { call, client } from './http.js';
import { SseReader, type SseFrame } from './sse.js';

/** The `gated` workflow: a quick step `first`, then `held`, which waits until its gate file exists. */
export const STREAMS_PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../auth/fixtures/streams');

/** Gate files in a folder of their own; `releaseAll` lets every held run go on (call it before closing services). */
export class Gates {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'svc-gates-'));
  private readonly paths: string[] = [];

  next(): string {
    const file = path.join(this.dir, `gate-${this.paths.length + 1}`);
    this.paths.push(file);
    return file;
  }

  release(file: string): void {
    writeFileSync(file, 'open');
  }

  releaseAll(): void {
    for (const file of this.paths) this.release(file);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts a `gated` run as the token's user (202 at once) and answers its id. */
export async function startHeldRun(baseUrl: string, token: string, gate: string): Promise<string> {
  const started = await call(baseUrl, 'POST', '/api/gated?wait=false', { token, json: { gate } });
  expect(started.status, JSON.stringify(started.body)).to.equal(202);
  return started.body.id as string;
}

/** `GET /api/runs/{id}/events`, read until the replay reached the completed `first` step. */
export async function followRun(baseUrl: string, token: string, runId: string): Promise<SseReader> {
  const reader = await SseReader.open(`${baseUrl}/api/runs/${runId}/events`, { token });
  expect(reader.status, reader.text).to.equal(200);
  for (;;) {
    const frame = await reader.until('step_completed', 15_000);
    if (frame.data.agent_id === 'first') return reader;
  }
}

/** Appends a `steered` event to the run (an admin's control request). */
export async function steer(baseUrl: string, adminToken: string, runId: string, message: string): Promise<void> {
  const steered = await client(baseUrl, adminToken).post(`/api/runs/${runId}/steer`, { message });
  expect(steered.status, JSON.stringify(steered.body)).to.equal(200);
}

/** Reads until the server ends the stream; fails if it is still open after `timeoutMs`. Answers the frames read meanwhile. */
export async function expectStreamEnds(reader: SseReader, timeoutMs = 15_000): Promise<SseFrame[]> {
  const before = reader.frames.length;
  try {
    await reader.readToEnd(timeoutMs);
  } catch (error) {
    expect.fail(`the stream is still open after ${timeoutMs} ms (${(error as Error).message})`);
  }
  expect(reader.isEnded, 'the stream ended').to.equal(true);
  return reader.frames.slice(before);
}
