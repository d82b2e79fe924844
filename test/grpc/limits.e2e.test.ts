// gRPC-Web messages are bounded like JSON bodies (SVC_BODY_LIMIT_BYTES, compressed and decompressed),
// and payload_json is held to the rules of every other JSON body: 100 levels, no NUL, no lone surrogate.
import { request as httpRequest } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { RunWorkflowRequestSchema, StepEventSchema, type StepEvent } from '../../src/contract/gen/svc/v1/execution_pb.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, withDeadline, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const PROJECT = fileURLToPath(new URL('../http/fixtures/hardening', import.meta.url));
const PATH = '/grpc/svc.v1.Execution/RunWorkflow';
const BODY_LIMIT = 1024 * 1024;
const RESOURCE_EXHAUSTED = 8;
const INVALID_ARGUMENT = 3;
/** Generous: an answer that does not come within this is a hang. */
const ANSWER_DEADLINE_MS = 15_000;

interface GrpcWebAnswer {
  httpStatus: number;
  grpcStatus: number | undefined;
  grpcMessage: string;
  events: StepEvent[];
}

/** One gRPC-Web frame: a flag byte (1: compressed), the length, the bytes. */
function frame(payload: Uint8Array, compressed: boolean, declaredLength = payload.length): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(compressed ? 1 : 0, 0);
  header.writeUInt32BE(declaredLength, 1);
  return Buffer.concat([header, payload]);
}

function requestBytes(workflowName: string, payloadJson: string): Uint8Array {
  return toBinary(RunWorkflowRequestSchema, create(RunWorkflowRequestSchema, { workflowName, payloadJson }));
}

/** Reads a gRPC-Web answer: the status from the headers (trailers-only) or from the trailer frame. */
function readAnswer(httpStatus: number, header: (name: string) => string | undefined, body: Buffer): GrpcWebAnswer {
  const answer: GrpcWebAnswer = { httpStatus, grpcStatus: undefined, grpcMessage: '', events: [] };
  const fromHeaders = header('grpc-status');
  if (fromHeaders !== undefined) {
    answer.grpcStatus = Number(fromHeaders);
    answer.grpcMessage = decodeURIComponent(header('grpc-message') ?? '');
  }
  let bytes = body;
  while (bytes.length >= 5) {
    const flags = bytes.readUInt8(0);
    const length = bytes.readUInt32BE(1);
    const sent = bytes.subarray(5, 5 + length);
    // The service answers compressed when the request was.
    const payload = (flags & 0x01) === 0 ? sent : gunzipSync(sent);
    bytes = bytes.subarray(5 + length);
    if ((flags & 0x80) === 0) {
      answer.events.push(fromBinary(StepEventSchema, payload));
      continue;
    }
    for (const line of payload.toString('utf8').split('\r\n')) {
      const [name, ...rest] = line.split(':');
      if (name?.trim() === 'grpc-status') answer.grpcStatus = Number(rest.join(':').trim());
      if (name?.trim() === 'grpc-message') answer.grpcMessage = decodeURIComponent(rest.join(':').trim());
    }
  }
  return answer;
}

describe('gRPC-Web request limits', function () {
  this.timeout(60_000);
  let service: Service;
  let admin: Admin;
  const countRuns = async () => (await service.kernel.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE type = 'run_started'`)).rows[0]!.n;

  function headersOf(options: { token?: string | undefined; compressed?: boolean }): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.compressed) headers['grpc-encoding'] = 'gzip';
    return headers;
  }

  async function send(
    body: Buffer,
    options: { token?: string | undefined; compressed?: boolean } = {},
  ): Promise<GrpcWebAnswer & { connection: string | null }> {
    const response = await withDeadline(fetch(`${service.url}${PATH}`, { method: 'POST', headers: headersOf(options), body }), ANSWER_DEADLINE_MS, 'an answer');
    const answer = readAnswer(response.status, (name) => response.headers.get(name) ?? undefined, Buffer.from(await response.arrayBuffer()));
    return { ...answer, connection: response.headers.get('connection') };
  }

  /** Sends `start` and keeps the request open (fetch would wait for the whole body before reading the answer). */
  async function sendAndHold(start: Buffer, options: { token?: string; compressed?: boolean }): Promise<GrpcWebAnswer> {
    const request = httpRequest(`${service.url}${PATH}`, { method: 'POST', headers: headersOf(options) });
    try {
      const answered = new Promise<GrpcWebAnswer>((resolve, reject) => {
        request.on('error', reject);
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve(readAnswer(response.statusCode ?? 0, (name) => response.headers[name] as string | undefined, Buffer.concat(chunks))),
          );
        });
      });
      request.write(start);
      return await withDeadline(answered, ANSWER_DEADLINE_MS, 'an answer');
    } finally {
      request.destroy();
    }
  }

  before(async () => {
    service = await startTestService({ projectDir: PROJECT, env: { SVC_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('runs a workflow from a small gzip-compressed frame (the limits leave normal messages alone)', async () => {
    const message = gzipSync(requestBytes('echo', JSON.stringify({ text: 'hi', data: 'x'.repeat(BODY_LIMIT / 2) })));
    const answer = await send(frame(message, true), { token: admin.token, compressed: true });
    expect(answer.grpcStatus, answer.grpcMessage).to.equal(0);
    expect(answer.events.map((e) => e.eventType).at(-1)).to.equal('done');
  });

  it('refuses a 64 KB gzip frame that inflates to 64 MiB with resource_exhausted, with or without a token, and starts no run', async () => {
    const huge = requestBytes('echo', JSON.stringify({ text: 'x'.repeat(64 * 1024 * 1024) }));
    const bomb = gzipSync(huge, { level: 9 });
    expect(bomb.length).to.be.below(BODY_LIMIT);
    const runsBefore = await countRuns();
    for (const token of [undefined, admin.token]) {
      const answer = await send(frame(bomb, true), { token, compressed: true });
      expect(answer.httpStatus).to.equal(200);
      expect(answer.grpcStatus, answer.grpcMessage).to.equal(RESOURCE_EXHAUSTED);
      expect(answer.events).to.deep.equal([]);
    }
    expect(await countRuns()).to.equal(runsBefore);
  });

  it('refuses an uncompressed frame over the limit with resource_exhausted, starts no run, and answers the next call', async () => {
    const runsBefore = await countRuns();
    const over = requestBytes('echo', JSON.stringify({ text: 'x'.repeat(BODY_LIMIT) }));
    const answer = await send(frame(over, false), { token: admin.token });
    expect(answer.grpcStatus, answer.grpcMessage).to.equal(RESOURCE_EXHAUSTED);
    expect(await countRuns()).to.equal(runsBefore);
    // The refused body was never read: the connection it came on must not swallow the next call,
    // and the answer says it ends, so that no client sends its next call on it meanwhile.
    expect(answer.connection).to.equal('close');
    const next = await send(frame(Buffer.from(requestBytes('echo', '{"text":"after"}')), false), { token: admin.token });
    expect(next.grpcStatus, next.grpcMessage).to.equal(0);
    expect(JSON.parse(next.events.at(-1)!.outputJson)).to.deep.equal({ text: 'after', data: null });
  });

  it('answers a frame that declares more than the limit at once, before the rest of its body is sent', async () => {
    for (const compressed of [false, true]) {
      // The header and a few bytes; the declared rest never comes while the answer is awaited.
      const start = frame(Buffer.from('abc'), compressed, 4 * BODY_LIMIT);
      const answer = await sendAndHold(start, { token: admin.token, compressed });
      expect(answer.grpcStatus, answer.grpcMessage).to.equal(RESOURCE_EXHAUSTED);
    }
  });

  it('refuses payload_json nested deeper than 100 levels with invalid_argument, and starts no run', async () => {
    const runsBefore = await countRuns();
    for (const levels of [100, 2_000, 100_000]) {
      const nested = '['.repeat(levels) + ']'.repeat(levels);
      const answer = await send(frame(Buffer.from(requestBytes('echo', `{"text":"deep","data":${nested}}`)), false), { token: admin.token });
      expect(answer.grpcStatus, `${levels}: ${answer.grpcMessage}`).to.equal(INVALID_ARGUMENT);
      expect(answer.grpcMessage).to.include('JSON nested deeper than 100 levels');
    }
    expect(await countRuns()).to.equal(runsBefore);
    // 99 levels inside the payload object make 100: accepted.
    const nested = '['.repeat(99) + ']'.repeat(99);
    const accepted = await send(frame(Buffer.from(requestBytes('echo', `{"text":"deep","data":${nested}}`)), false), { token: admin.token });
    expect(accepted.grpcStatus, accepted.grpcMessage).to.equal(0);
  });

  it('refuses NUL and lone surrogates in payload_json with invalid_argument naming the place, and starts no run', async () => {
    const runsBefore = await countRuns();
    for (const text of [String.raw`"a\u0000b"`, String.raw`"a\ud800b"`, String.raw`"\udfff"`]) {
      const answer = await send(frame(Buffer.from(requestBytes('echo', `{"text":${text}}`)), false), { token: admin.token });
      expect(answer.grpcStatus, `${text}: ${answer.grpcMessage}`).to.equal(INVALID_ARGUMENT);
      const { detail } = JSON.parse(answer.grpcMessage) as { detail: { loc: string[]; msg: string }[] };
      expect(detail.map((issue) => issue.loc)).to.deep.equal([['body', 'text']]);
      expect(detail[0]!.msg).to.match(/NUL|surrogate/);
    }
    const keyed = await send(frame(Buffer.from(requestBytes('echo', '{"text":"x","data":{"__proto__":{"admin":true}}}')), false), { token: admin.token });
    expect(keyed.grpcStatus, keyed.grpcMessage).to.equal(INVALID_ARGUMENT);
    expect(keyed.grpcMessage).to.equal('payload_json may not contain the key "__proto__"');
    expect(await countRuns()).to.equal(runsBefore);
  });
});
