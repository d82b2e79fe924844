// svc.yaml's SystemConfig document, read as settings by name: spec.settings, and the two older
// spellings spec.deployment_mode (SVC_ENV) and spec.api.expose_model_crud (SVC_EXPOSE_MODEL_CRUD).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isJsonObject, type JsonObject } from '../kernel/json.js';
import { DEPLOYMENT_ENVS, SETTING_NAMES } from './schema.js';

export interface SystemConfigSettings {
  /** Values as text, as the environment would give them. */
  settings: Record<string, string>;
  problems: string[];
}

const NONE: SystemConfigSettings = { settings: {}, problems: [] };

export function readSystemConfig(projectDir: string): SystemConfigSettings {
  const file = path.join(projectDir, 'svc.yaml');
  if (!existsSync(file)) return NONE;
  let spec: JsonObject | undefined;
  try {
    spec = findSystemConfigSpec(readFileSync(file, 'utf8'));
  } catch (error) {
    return { settings: {}, problems: [`svc.yaml cannot be read: ${(error as Error).message}`] };
  }
  if (spec === undefined) return NONE;
  const problems: string[] = [];
  // spec.settings wins over the older spellings: it names the setting itself.
  const settings = { ...olderSpellings(spec, problems), ...namedSettings(spec.settings, problems) };
  return { settings, problems };
}

function findSystemConfigSpec(text: string): JsonObject | undefined {
  const documents = parseAllDocuments(text);
  // parseAllDocuments never throws: a syntax error would otherwise leave a half-read file.
  const syntaxError = documents.flatMap((d) => d.errors)[0];
  if (syntaxError) throw syntaxError;
  const document = documents.map((d) => d.toJS() as unknown).find((d) => isJsonObject(d) && d.kind === 'SystemConfig');
  if (!isJsonObject(document)) return undefined;
  return isJsonObject(document.spec) ? document.spec : {};
}

function olderSpellings(spec: JsonObject, problems: string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  if (spec.deployment_mode !== undefined) {
    const mode = String(spec.deployment_mode);
    if ((DEPLOYMENT_ENVS as readonly string[]).includes(mode)) settings.SVC_ENV = mode;
    else problems.push(`svc.yaml spec.deployment_mode must be one of ${DEPLOYMENT_ENVS.join(', ')}`);
  }
  const exposeModelCrud = isJsonObject(spec.api) ? spec.api.expose_model_crud : undefined;
  if (exposeModelCrud !== undefined) {
    if (typeof exposeModelCrud === 'boolean') settings.SVC_EXPOSE_MODEL_CRUD = String(exposeModelCrud);
    else problems.push('svc.yaml spec.api.expose_model_crud must be true or false');
  }
  return settings;
}

function namedSettings(section: unknown, problems: string[]): Record<string, string> {
  if (section === undefined) return {};
  if (!isJsonObject(section)) {
    problems.push('svc.yaml spec.settings must be a mapping');
    return {};
  }
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(section)) {
    if (!SETTING_NAMES.includes(name)) problems.push(`svc.yaml spec.settings.${name} is not a known setting`);
    else if (value !== null && value !== undefined) settings[name] = String(value);
  }
  return settings;
}
