// The gRPC-Web transport (Connect for the web): streams a run's step events as StepFrames.
import { createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import type { Json, JsonRecord, RunDescriptor, StepFrame } from '../contract/types.js';
import { Execution, type StepEvent } from '../contract/gen/svc/v1/execution_pb.js';

const isBrowser = typeof (globalThis as { document?: unknown }).document !== 'undefined';

const parse = <T>(text: string): T | undefined => (text === '' ? undefined : (JSON.parse(text) as T));

export function toStepFrame(event: StepEvent): StepFrame {
  const frame: StepFrame = { event_type: event.eventType as StepFrame['event_type'] };
  if (event.stepId) frame.step_id = event.stepId;
  if (event.kind) frame.kind = event.kind;
  if (event.signal) frame.signal = event.signal;
  const snapshot = parse<JsonRecord>(event.snapshotJson);
  if (snapshot) frame.snapshot = snapshot;
  if (event.eventType === 'step') frame.duration_ms = event.durationMs;
  if (event.errorDetail) frame.error_detail = event.errorDetail;
  if (event.eventType === 'done') frame.output = parse<Json>(event.outputJson) ?? null;
  if (event.eventType === 'error') {
    frame.message = event.message;
    frame.details = event.details;
  }
  const run = parse<RunDescriptor>(event.runJson);
  if (run) frame.run = run;
  return frame;
}

/** Runs a workflow over gRPC-Web; in browsers the token also travels in the message body. */
export async function* runOverGrpcWeb(
  baseUrl: string,
  name: string,
  payload: unknown,
  token: string | undefined,
  signal?: AbortSignal,
): AsyncGenerator<{ frame: StepFrame; runId: string }> {
  const transport = createGrpcWebTransport({ baseUrl: `${baseUrl}/grpc` });
  const client = createClient(Execution, transport);
  const request = { workflowName: name, payloadJson: JSON.stringify(payload ?? {}), tokenFallback: isBrowser && token ? token : '' };
  const stream = client.runWorkflow(request, { ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}), ...(signal ? { signal } : {}) });
  for await (const event of stream) yield { frame: toStepFrame(event), runId: event.runId };
}
