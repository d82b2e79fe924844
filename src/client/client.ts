// SvcClient: run workflows (REST, SSE or gRPC-Web), read and control runs, decide approvals, model CRUD, schedule admin.
import type {
  Approval,
  DecisionRequest,
  Json,
  JsonRecord,
  RunDescriptor,
  RunEvent,
  RunExport,
  StepFrame,
  WorkflowEnvelope,
  WorkflowManifest,
  WorkflowSummary,
} from '../contract/types.js';
import { SvcRequestError, SvcRunFailedError, SvcRunPendingError } from './errors.js';
import { runOverGrpcWeb } from './grpc.js';
import { HttpCore, readBody, readEvents } from './http.js';
import { fetchRunPage, iterateRuns, type RunPage, type RunSearch } from './runSearch.js';
import { scheduleAdmin } from './schedules.js';
import { auditLog } from './audit.js';
import { artifactStore, iamAdmin } from './admin.js';
import { workflowVersions } from './versions.js';

export interface SvcClientOptions {
  baseUrl: string;
  token?: string;
  /** How long manifests are cached, in ms (default 60000; 0 disables the cache). */
  manifestCacheTtl?: number;
}

export type Transport = 'rest' | 'sse' | 'grpc';

export interface ExecuteOptions {
  payload?: unknown;
  /** Step events as they happen (SSE or gRPC-Web). */
  onProgress?: (frame: StepFrame) => void;
  mode?: Transport;
  token?: string;
  signal?: AbortSignal;
  /**
   * Sent as `Idempotency-Key` (REST and SSE): a retry with the same key and payload starts no second
   * run and answers as the first did. Use a fresh random key per logical request.
   */
  idempotencyKey?: string;
}

export interface ListQuery {
  limit?: number;
  offset?: number;
  filters?: Record<string, string | number | boolean>;
  include?: string[];
}

export interface RunEventsOptions {
  /** Resume after this seq (0: from the start). */
  fromSeq?: number;
  signal?: AbortSignal;
  /** Reconnections after a dropped stream before giving up (default 5). */
  maxReconnects?: number;
}

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_aborted']);

export class SvcClient {
  private readonly http: HttpCore;
  private readonly manifestTtl: number;
  private readonly manifests = new Map<string, { manifest: WorkflowManifest; at: number }>();
  /** `/admin/schedules` (deployment admins): list, pause, resume, run now, backfill. */
  readonly schedules: ReturnType<typeof scheduleAdmin>;
  /** `/admin/events` (`audit:read`): the event log by pages, to the head, or live. */
  readonly audit: ReturnType<typeof auditLog>;
  /** `/auth/admin` users and roles (`iam:admin`) and `/admin/scopes`. */
  readonly iam: ReturnType<typeof iamAdmin>;
  /** `/api/artifacts` (`artifacts:read`): every artifact's versions, a version's content. */
  readonly artifacts: ReturnType<typeof artifactStore>;
  /** `/admin/workflows` (`iam:admin`): versions, toggle, fork. */
  readonly workflowVersions: ReturnType<typeof workflowVersions>;

  constructor(options: SvcClientOptions) {
    this.http = new HttpCore(options.baseUrl, options.token);
    this.schedules = scheduleAdmin(this.http);
    this.audit = auditLog(this.http);
    this.iam = iamAdmin(this.http);
    this.artifacts = artifactStore(this.http);
    this.workflowVersions = workflowVersions(this.http);
    this.manifestTtl = options.manifestCacheTtl ?? 60_000;
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  setToken(token: string | undefined): void {
    this.http.token = token;
  }

  invalidateManifest(name?: string): void {
    if (name === undefined) this.manifests.clear();
    else this.manifests.delete(name);
  }

  async getManifest(name: string): Promise<WorkflowManifest> {
    const cached = this.manifests.get(name);
    if (cached && this.manifestTtl > 0 && Date.now() - cached.at < this.manifestTtl) return cached.manifest;
    const manifest = await this.http.json<WorkflowManifest>(`/api/_system/workflows/${encodeURIComponent(name)}`);
    if (this.manifestTtl > 0) this.manifests.set(name, { manifest, at: Date.now() });
    return manifest;
  }

  listWorkflows(): Promise<Record<string, WorkflowSummary>> {
    return this.http.json('/api/_system/workflows');
  }

  /** `GET /metrics` (`metrics:read`): the Prometheus text format, every worker's series in one answer. */
  async metrics(): Promise<string> {
    const response = await this.http.send('/metrics', { headers: { accept: 'text/plain' } });
    if (!response.ok) throw new SvcRequestError(response.status, await readBody(response));
    return response.text();
  }

  /**
   * Runs a workflow and answers its output. gRPC-Web when mode is grpc; SSE when mode is sse, or when
   * onProgress is given and the workflow has slow steps; else plain REST. A run that waits throws
   * SvcRunPendingError, a failed run SvcRunFailedError, a refused call SvcRequestError.
   */
  async execute<T = Json>(name: string, options: ExecuteOptions = {}): Promise<T> {
    const manifest = await this.getManifest(name);
    const transport: Transport = options.mode ?? (options.onProgress && manifest.has_slow_steps ? 'sse' : 'rest');
    if (transport === 'grpc') {
      if (options.idempotencyKey !== undefined) throw new Error('idempotencyKey needs mode rest or sse: gRPC-Web calls carry no Idempotency-Key');
      return this.executeGrpc<T>(name, options);
    }
    if (transport === 'sse') return this.executeSse<T>(manifest, options);
    return this.executeRest<T>(manifest, options);
  }

  private triggerRequest(manifest: WorkflowManifest, options: ExecuteOptions, accept?: string) {
    const isGet = manifest.trigger_method === 'GET';
    const query = isGet && options.payload ? `?${new URLSearchParams(options.payload as Record<string, string>).toString()}` : '';
    return this.http.send(`${manifest.trigger_path}${query}`, {
      method: manifest.trigger_method,
      ...(isGet ? {} : { body: options.payload ?? {} }),
      token: options.token,
      signal: options.signal,
      headers: { ...(accept ? { accept } : {}), ...(options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : {}) },
    });
  }

  private async executeRest<T>(manifest: WorkflowManifest, options: ExecuteOptions): Promise<T> {
    const response = await this.triggerRequest(manifest, options);
    const body = await readBody(response);
    const runId = response.headers.get('x-svc-run-id') ?? undefined;
    if (response.status === 202) throw new SvcRunPendingError(body as RunDescriptor);
    if (response.ok) return body as T;
    if (isEnvelope(body)) throw new SvcRunFailedError(body.error.message, runId, body, body.error.details);
    throw new SvcRequestError(response.status, body);
  }

  private async executeSse<T>(manifest: WorkflowManifest, options: ExecuteOptions): Promise<T> {
    const response = await this.triggerRequest(manifest, options, 'text/event-stream');
    if (!response.ok) throw new SvcRequestError(response.status, await readBody(response));
    const runId = response.headers.get('x-svc-run-id') ?? undefined;
    for await (const message of readEvents(response)) {
      const frame = JSON.parse(message.data) as StepFrame;
      const result = this.settle<T>(frame, runId, options);
      if (result.done) return result.value;
    }
    throw new SvcRunFailedError('The stream ended before the run did', runId);
  }

  private async executeGrpc<T>(name: string, options: ExecuteOptions): Promise<T> {
    let runId: string | undefined;
    try {
      for await (const { frame, runId: id } of runOverGrpcWeb(this.http.baseUrl, name, options.payload, options.token ?? this.http.token, options.signal)) {
        runId = id;
        const result = this.settle<T>(frame, runId, options);
        if (result.done) return result.value;
      }
    } catch (error) {
      const connect = error as { code?: number; rawMessage?: string; name?: string };
      if (connect.name === 'ConnectError') throw new SvcRequestError(grpcStatusToHttp(connect.code), { detail: connect.rawMessage });
      throw error;
    }
    throw new SvcRunFailedError('The stream ended before the run did', runId);
  }

  /** A terminal frame settles the call; others go to onProgress. */
  private settle<T>(frame: StepFrame, runId: string | undefined, options: ExecuteOptions): { done: true; value: T } | { done: false } {
    switch (frame.event_type) {
      case 'done':
        return { done: true, value: frame.output as T };
      case 'error':
        throw new SvcRunFailedError(frame.message ?? 'The run failed', runId, undefined, frame.details);
      case 'suspended':
        throw new SvcRunPendingError(frame.run ?? ({ id: runId ?? '', status: 'waiting_human' } as RunDescriptor));
      default:
        options.onProgress?.(frame);
        return { done: false };
    }
  }

  readonly runs = {
    /** The runs the caller may read, newest first: one page (see `page` for its cursor). */
    list: async (search: RunSearch = {}): Promise<RunDescriptor[]> => (await fetchRunPage(this.http, search)).runs,
    /** One page and the cursor of the next. */
    page: (search: RunSearch = {}): Promise<RunPage> => fetchRunPage(this.http, search),
    /** Every matching run, following the cursor: `for await (const run of client.runs.iterate({ status: 'failed' }))`. */
    iterate: (search: RunSearch = {}): AsyncGenerator<RunDescriptor> => iterateRuns(this.http, search),
    /** Starts a run of workflow `name` and answers it at once, not waited for (`POST /api/workflows/{name}/runs?wait=false`). */
    start: (name: string, input: JsonRecord = {}): Promise<RunDescriptor> =>
      this.http.json(`/api/workflows/${encodeURIComponent(name)}/runs?wait=false`, { method: 'POST', body: input }),
    get: (id: string): Promise<RunDescriptor> => this.http.json(`/api/runs/${encodeURIComponent(id)}`),
    export: (id: string): Promise<RunExport> => this.http.json(`/api/runs/${encodeURIComponent(id)}/export`),
    pause: (id: string): Promise<RunDescriptor> => this.control(id, 'pause'),
    resume: (id: string): Promise<RunDescriptor> => this.control(id, 'resume'),
    abort: (id: string, reason?: string): Promise<RunDescriptor> => this.control(id, 'abort', reason ? { reason } : {}),
    steer: (id: string, message: string): Promise<RunDescriptor> => this.control(id, 'steer', { message }),
    /**
     * A new run from `fromStep` on, reusing what run `id` recorded before it (nothing before it runs
     * again), with `input` merged over its input; answers the new run (`forked_from` set), not waited for.
     * @example const retried = await client.runs.fork(failed.id, 'charge', { card: 'tok_new' });
     */
    fork: (id: string, fromStep: string, input?: JsonRecord): Promise<RunDescriptor> =>
      this.control(id, 'fork', { from_step: fromStep, ...(input ? { input } : {}) }),
    /** The journal, replayed then live; a dropped stream resumes from the last seq (Last-Event-ID). */
    events: (id: string, options: RunEventsOptions = {}): AsyncGenerator<RunEvent> => this.followRun(id, options),
  };

  readonly approvals = {
    list: (): Promise<Approval[]> => this.http.json('/api/approvals'),
    decide: (approvalId: string, decision: DecisionRequest): Promise<Approval> =>
      this.http.json(`/api/approvals/${encodeURIComponent(approvalId)}`, { method: 'POST', body: decision }),
  };

  /** CRUD of one model (`/models/{model}/`); any non-2xx answer throws. */
  crud<R = JsonRecord>(model: string) {
    const base = `/models/${encodeURIComponent(model.toLowerCase())}`;
    return {
      list: (query: ListQuery = {}): Promise<R[]> => {
        const params = new URLSearchParams();
        if (query.limit !== undefined) params.set('limit', String(query.limit));
        if (query.offset !== undefined) params.set('offset', String(query.offset));
        for (const [field, value] of Object.entries(query.filters ?? {})) params.set(`filter[${field}]`, String(value));
        if (query.include?.length) params.set('include', query.include.join(','));
        const text = params.toString();
        return this.http.json(`${base}/${text ? `?${text}` : ''}`);
      },
      get: (id: string, include?: string[]): Promise<R> =>
        this.http.json(`${base}/${encodeURIComponent(id)}${include?.length ? `?include=${include.join(',')}` : ''}`),
      create: (record: Partial<R>): Promise<R> => this.http.json(`${base}/`, { method: 'POST', body: record }),
      update: (id: string, changes: Partial<R>): Promise<R> => this.http.json(`${base}/${encodeURIComponent(id)}`, { method: 'PATCH', body: changes }),
      delete: (id: string): Promise<void> => this.http.json(`${base}/${encodeURIComponent(id)}`, { method: 'DELETE' }),
    };
  }

  private control(id: string, action: string, body: JsonRecord = {}): Promise<RunDescriptor> {
    return this.http.json(`/api/runs/${encodeURIComponent(id)}/${action}`, { method: 'POST', body });
  }

  private async *followRun(id: string, options: RunEventsOptions): AsyncGenerator<RunEvent> {
    let last = options.fromSeq ?? 0;
    let reconnects = 0;
    for (;;) {
      const response = await this.http.send(`/api/runs/${encodeURIComponent(id)}/events`, {
        headers: { accept: 'text/event-stream', ...(last > 0 ? { 'last-event-id': String(last) } : {}) },
        signal: options.signal,
      });
      if (!response.ok) throw new SvcRequestError(response.status, await readBody(response));
      try {
        for await (const message of readEvents(response)) {
          const event = JSON.parse(message.data) as RunEvent;
          if (event.seq <= last) continue;
          last = event.seq;
          reconnects = 0;
          yield event;
          if (TERMINAL.has(event.type)) return;
        }
      } catch (error) {
        if (options.signal?.aborted) throw error;
      }
      if (options.signal?.aborted) return;
      if (++reconnects > (options.maxReconnects ?? 5)) throw new Error(`The event stream of run ${id} dropped ${reconnects} times`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** reconnects)));
    }
  }
}

function isEnvelope(body: unknown): body is WorkflowEnvelope {
  return typeof body === 'object' && body !== null && (body as { success?: unknown }).success === false && 'error' in body;
}

/** Connect codes (gRPC numbering) as the HTTP statuses the REST routes would answer. */
const GRPC_TO_HTTP: Record<number, number> = { 16: 401, 7: 403, 5: 404, 3: 422, 10: 409, 14: 503 };
function grpcStatusToHttp(code: number | undefined): number {
  return (code !== undefined && GRPC_TO_HTTP[code]) || 500;
}
