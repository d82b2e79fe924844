// Artifacts: named, versioned, typed assets (prompts, steering, skills, guardrails, hooks, MCP servers).
import { createHash } from 'node:crypto';
import type { JsonValue } from '../kernel/json.js';

export const ARTIFACT_TYPES = ['prompt', 'steering', 'skill', 'guardrail', 'hook', 'mcp'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
/** Types whose content is prose (a string); the others take a JSON object. */
export const PROSE_TYPES: readonly ArtifactType[] = ['prompt', 'steering', 'skill'];
export const MAX_ARTIFACT_BYTES = 512 * 1024;
export const ARTIFACT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export interface Artifact {
  name: string;
  version: string;
  type: ArtifactType;
  content: JsonValue;
  hash: string;
  description: string | null;
  source: 'project' | 'upload';
  createdAt: string | null;
  file?: string;
}

/** JSON with sorted keys: the same content always hashes the same. */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 hex of the content: the text itself for prose, canonical JSON otherwise. */
export function contentHash(content: JsonValue): string {
  return createHash('sha256')
    .update(typeof content === 'string' ? content : canonicalJson(content), 'utf8')
    .digest('hex');
}

export function contentBytes(content: JsonValue): number {
  return Buffer.byteLength(typeof content === 'string' ? content : canonicalJson(content), 'utf8');
}

/** `artifact://name` or `artifact://name@version`. */
export function parseArtifactRef(value: unknown): { name: string; version?: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^artifact:\/\/([A-Za-z0-9][A-Za-z0-9_.-]{0,127}?)(?:@([A-Za-z0-9][A-Za-z0-9_.-]{0,31}))?$/.exec(value.trim());
  if (!match) return undefined;
  return { name: match[1]!, ...(match[2] ? { version: match[2] } : {}) };
}

/** Orders versions numerically where they are numbers ("10" after "9"). */
export function compareArtifactVersions(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
