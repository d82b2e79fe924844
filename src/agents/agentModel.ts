// AgentModel documents (llms/): an OpenAI-compatible Chat Completions endpoint and its defaults.
import { interpolateEnvironment } from '../config/interpolate.js';
import type { ProjectDocument } from '../project/documents.js';

export interface AgentModelDefinition {
  name: string;
  provider: 'openai';
  baseUrl: string;
  apiKey: string;
  model: string;
  temperature?: number;
  maxTokens?: number;
  /** Per request, in seconds. */
  timeoutSeconds: number;
  maxRetries: number;
  file: string;
}

/** Parses AgentModel documents; one whose `${VAR}`s are unset is skipped with a warning. */
export function parseAgentModels(
  documents: ProjectDocument[],
  environment: Readonly<Record<string, string>>,
): {
  models: AgentModelDefinition[];
  problems: string[];
  warnings: string[];
} {
  const models: AgentModelDefinition[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const document of documents.filter((d) => d.kind === 'AgentModel')) {
    const { value: spec, missing } = interpolateEnvironment((document.body.spec ?? {}) as Record<string, unknown>, environment);
    if (missing.length > 0) {
      warnings.push(`${document.file}: AgentModel ${document.name} skipped: ${[...new Set(missing)].join(', ')} not set`);
      continue;
    }
    const provider = spec.provider ?? 'openai';
    if (provider !== 'openai') problems.push(`${document.file}: provider must be openai (any OpenAI-compatible server)`);
    if (typeof spec.base_url !== 'string' || !/^https?:\/\//.test(spec.base_url)) problems.push(`${document.file}: base_url must be an http(s) URL`);
    if (typeof spec.model !== 'string' || spec.model.length === 0) problems.push(`${document.file}: model is required`);
    if (models.some((m) => m.name === document.name)) problems.push(`${document.file}: AgentModel ${document.name} is defined twice`);
    if (problems.length > 0) continue;
    models.push({
      name: document.name,
      provider: 'openai',
      baseUrl: String(spec.base_url),
      // Local servers (Ollama, llama.cpp) take any key; the SDK wants one.
      apiKey: typeof spec.api_key === 'string' && spec.api_key.length > 0 ? spec.api_key : 'not-needed',
      model: String(spec.model),
      ...(typeof spec.temperature === 'number' ? { temperature: spec.temperature } : {}),
      ...(typeof spec.max_tokens === 'number' ? { maxTokens: spec.max_tokens } : {}),
      timeoutSeconds: typeof spec.timeout === 'number' && spec.timeout > 0 ? spec.timeout : 60,
      maxRetries: typeof spec.max_retries === 'number' ? Math.max(0, Math.min(5, spec.max_retries)) : 2,
      file: document.file,
    });
  }
  return { models, problems, warnings };
}
