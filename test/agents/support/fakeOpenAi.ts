// A local OpenAI-compatible Chat Completions server (real HTTP on 127.0.0.1:0) with scripted answers.
// Scripts are keyed by a marker text: a request is answered by the first script whose marker appears
// anywhere in its messages, so runs of different tests never take each other's answers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object (sent as JSON text) or raw text (to send malformed arguments). */
  args: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptedAnswer {
  content?: string | null;
  toolCalls?: ScriptedToolCall[];
  /** Answer with this HTTP status and an error body instead (500: the SDK retries). */
  status?: number;
  /** Waits this long before answering. */
  delayMs?: number;
  /** Resets the connection instead of answering (a peer that died mid-request). */
  reset?: boolean;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number };
}

export interface ModelRequest {
  key: string | null;
  model: string;
  messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools: { type: string; function: { name: string; description: string; parameters: unknown } }[];
  body: Record<string, any>;
  at: number;
  /** Set once the answer went out (false while a slow answer is pending or the caller hung up). */
  answered: boolean;
  /** The caller closed the connection before a slow answer went out (it cancelled the call). */
  hungUp: boolean;
}

let callCounter = 0;

export class FakeOpenAi {
  readonly requests: ModelRequest[] = [];
  private readonly scripts = new Map<string, ScriptedAnswer[]>();
  private server: Server | undefined;
  private readonly waiters: (() => void)[] = [];
  /** `http://127.0.0.1:<port>/v1`, the AgentModel's base_url. */
  baseUrl = '';

  /** Queues answers for requests whose messages mention `key`. */
  script(key: string, answers: ScriptedAnswer[]): void {
    this.scripts.set(key, [...(this.scripts.get(key) ?? []), ...answers]);
  }

  /** Requests that mention `key`, in arrival order. */
  requestsFor(key: string): ModelRequest[] {
    return this.requests.filter((r) => r.key === key);
  }

  /** Answers not yet consumed for `key`. */
  remaining(key: string): number {
    return this.scripts.get(key)?.length ?? 0;
  }

  /** Resolves once `count` requests for `key` arrived. */
  async waitForRequests(key: string, count: number, timeoutMs = 10_000): Promise<ModelRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requestsFor(key).length < count) {
      if (Date.now() > deadline) throw new Error(`the fake model got ${this.requestsFor(key).length} of ${count} requests for ${key}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requestsFor(key);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    req.setEncoding('utf8');
    for await (const chunk of req) text += chunk as string;
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    let body: Record<string, any>;
    try {
      body = JSON.parse(text) as Record<string, any>;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const messagesText = JSON.stringify(body.messages ?? []);
    const key = [...this.scripts.keys()].find((k) => messagesText.includes(k)) ?? null;
    const request: ModelRequest = {
      key,
      model: String(body.model),
      messages: body.messages ?? [],
      tools: body.tools ?? [],
      body,
      at: Date.now(),
      answered: false,
      hungUp: false,
    };
    this.requests.push(request);
    this.waiters.splice(0).forEach((wake) => wake());
    const answer = key ? this.scripts.get(key)!.shift() : undefined;
    if (!answer) {
      // 400 is not retried by the SDK: a missing script shows up as one clear failure.
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no scripted answer (key ${key})` } }));
      return;
    }
    if (answer.delayMs) {
      const gone = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), answer.delayMs);
        res.once('close', () => {
          clearTimeout(timer);
          resolve(!res.writableEnded);
        });
      });
      if (gone || res.destroyed) {
        request.hungUp = true;
        return;
      }
    }
    if (answer.reset) {
      req.socket.destroy();
      return;
    }
    if (answer.status && answer.status >= 400) {
      res
        .writeHead(answer.status, { 'content-type': 'application/json', 'retry-after-ms': '5' })
        .end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }));
      request.answered = true;
      return;
    }
    const usage = answer.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
    const toolCalls = (answer.toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${++callCounter}`,
      type: 'function',
      function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args) },
    }));
    const completion = {
      id: `chatcmpl-${++callCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
          message: { role: 'assistant', content: answer.content ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        },
      ],
      usage: { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens },
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
    request.answered = true;
  }
}
