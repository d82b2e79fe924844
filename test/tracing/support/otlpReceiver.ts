// A loopback OTLP/HTTP trace receiver: accepts POST /v1/traces in the JSON encoding the
// OpenTelemetry http exporter sends, and keeps every span it was sent, flattened.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../../support/http.js';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  service: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: { traceId: string; spanId: string }[];
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (attributes: OtlpAttribute[] | undefined) => Object.fromEntries((attributes ?? []).map((a) => [a.key, valueOf(a.value)]));

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests that were not JSON OTLP (the test fails on any). */
  readonly refused: string[] = [];
  private server: Server | undefined;
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): the exporter appends /v1/traces. */
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  inTrace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** Waits until `probe` finds what it looks for among the spans received (generous deadline). */
  async waitFor(what: string, probe: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const found = await eventually(async () => probe(this.spans), timeoutMs, 50);
    if (!found.ok) throw new Error(`the receiver never got ${what}; it has: ${this.spans.map((s) => `${s.name}@${s.traceId.slice(0, 8)}`).join(', ')}`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    req.setEncoding('utf8');
    for await (const chunk of req) text += chunk as string;
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      this.refused.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(text) as OtlpExport;
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
            service,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }
}

/** A called API on loopback: answers `{"n": <count>}`, records each request's `traceparent`; `hold` keeps the first N requests of a path unanswered. */
export class TracedApi {
  readonly requests: { path: string; traceparent: string | undefined }[] = [];
  private server: Server | undefined;
  private readonly held: ServerResponse[] = [];
  url = '';

  constructor(private readonly hold: { path: string; count: number } | null = null) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '';
      this.requests.push({ path, traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined });
      const seen = this.requests.filter((r) => r.path === path).length;
      if (this.hold && this.hold.path === path && seen <= this.hold.count) {
        this.held.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n: seen }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The trace id and parent span id of a W3C `traceparent`. */
export function parseTraceparent(traceparent: string | undefined): { traceId: string; parentId: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(traceparent ?? '');
  if (!match) throw new Error(`not a traceparent: ${String(traceparent)}`);
  return { traceId: match[1]!, parentId: match[2]! };
}
