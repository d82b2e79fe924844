// Chat Completions through the maintained `openai` SDK, pointed at any OpenAI-compatible base_url.
import { SpanKind } from '@opentelemetry/api';
import OpenAI from 'openai';
import type { JsonObject } from '../kernel/json.js';
import { countLlmTokens } from '../metrics/registry.js';
import type { OutboundFetch } from '../outbound/fetch.js';
import { inSpan, svcTracer, tracingEnabled } from '../tracing/tracer.js';
import type { AgentModelDefinition } from './agentModel.js';

export interface ChatMessage extends JsonObject {
  role: 'system' | 'user' | 'assistant' | 'tool';
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

export interface ToolCall extends JsonObject {
  id: string;
  name: string;
  /** The raw JSON text the model produced (may be malformed). */
  arguments: string;
}

export interface ChatAnswer extends JsonObject {
  content: string | null;
  tool_calls: ToolCall[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface LlmClient {
  chat(messages: ChatMessage[], tools: ToolSpec[], jsonOutput: boolean, signal?: AbortSignal): Promise<ChatAnswer>;
}

/** `fetch` carries every request to the model's server (the destination policy). */
export function createLlmClient(model: AgentModelDefinition, fetch: OutboundFetch): LlmClient {
  const client = new OpenAI({ baseURL: model.baseUrl, apiKey: model.apiKey, timeout: model.timeoutSeconds * 1000, maxRetries: model.maxRetries, fetch });
  return {
    chat: (messages, tools, jsonOutput, signal) =>
      traceChat(model, async () => {
        const completion = await client.chat.completions.create(
          {
            model: model.model,
            messages: messages as unknown as OpenAI.Chat.ChatCompletionMessageParam[],
            ...(tools.length > 0
              ? { tools: tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
              : {}),
            ...(model.temperature !== undefined ? { temperature: model.temperature } : {}),
            ...(model.maxTokens !== undefined ? { max_tokens: model.maxTokens } : {}),
            ...(jsonOutput && tools.length === 0 ? { response_format: { type: 'json_object' as const } } : {}),
          },
          signal ? { signal } : {},
        );
        const message = completion.choices[0]?.message;
        const usage = completion.usage;
        countLlmTokens(model.model, 'input', usage?.prompt_tokens);
        countLlmTokens(model.model, 'output', usage?.completion_tokens);
        const answer: ChatAnswer = {
          content: message?.content ?? null,
          tool_calls: (message?.tool_calls ?? []).flatMap((call) =>
            call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : [],
          ),
          usage: {
            prompt_tokens: usage?.prompt_tokens ?? 0,
            completion_tokens: usage?.completion_tokens ?? 0,
            total_tokens: usage?.total_tokens ?? (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0),
          },
        };
        return { answer, responseModel: completion.model, finishReason: completion.choices[0]?.finish_reason };
      }),
  };
}

interface Completed {
  answer: ChatAnswer;
  responseModel: string | undefined;
  finishReason: string | undefined;
}

/**
 * The span of one chat completion (tracing on), with the GenAI semantic conventions' names: the
 * model asked for and answering, the tokens in and out. The HTTP request inside it is its child.
 */
async function traceChat(model: AgentModelDefinition, complete: () => Promise<Completed>): Promise<ChatAnswer> {
  if (!tracingEnabled()) return (await complete()).answer;
  // The GenAI names are still "incubating" in @opentelemetry/semantic-conventions, which asks that they be copied, not imported.
  const span = svcTracer().startSpan(`chat ${model.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': model.model,
      ...(model.temperature !== undefined ? { 'gen_ai.request.temperature': model.temperature } : {}),
      ...(model.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': model.maxTokens } : {}),
      'server.address': hostOf(model.baseUrl),
    },
  });
  return inSpan(span, async () => {
    const { answer, responseModel, finishReason } = await complete();
    span.setAttributes({ 'gen_ai.usage.input_tokens': answer.usage.prompt_tokens, 'gen_ai.usage.output_tokens': answer.usage.completion_tokens });
    if (responseModel) span.setAttribute('gen_ai.response.model', responseModel);
    if (finishReason) span.setAttribute('gen_ai.response.finish_reasons', [finishReason]);
    return answer;
  });
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).hostname : url;
}
