// Artifacts of the project: YAML documents (kind Artifact) and prose `.md` files with front matter.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { JsonValue } from '../kernel/json.js';
import type { ProjectDocument } from '../project/documents.js';
import { ARTIFACT_NAME, ARTIFACT_TYPES, contentHash, PROSE_TYPES, type Artifact, type ArtifactType } from './artifact.js';

export function loadProjectArtifacts(projectDir: string, documents: ProjectDocument[]): { artifacts: Artifact[]; problems: string[] } {
  const artifacts: Artifact[] = [];
  const problems: string[] = [];
  const add = (file: string, name: unknown, version: unknown, type: unknown, content: unknown, description: unknown) => {
    if (typeof name !== 'string' || !ARTIFACT_NAME.test(name)) return problems.push(`${file}: artifact name ${String(name)} is not valid`);
    if (!ARTIFACT_TYPES.includes(type as ArtifactType)) return problems.push(`${file}: artifact type must be one of ${ARTIFACT_TYPES.join(', ')}`);
    const isProse = PROSE_TYPES.includes(type as ArtifactType);
    if (isProse ? typeof content !== 'string' : typeof content !== 'object' || content === null || Array.isArray(content)) {
      return problems.push(`${file}: a ${String(type)} artifact takes ${isProse ? 'text' : 'an object'} as content`);
    }
    if (artifacts.some((a) => a.name === name)) return problems.push(`${file}: artifact ${name} is defined twice in the project`);
    artifacts.push({
      name,
      version: String(version ?? '1'),
      type: type as ArtifactType,
      content: content as JsonValue,
      hash: contentHash(content as JsonValue),
      description: typeof description === 'string' ? description : null,
      source: 'project',
      createdAt: null,
      file,
    });
    return undefined;
  };
  for (const document of documents.filter((d) => d.kind === 'Artifact')) {
    const metadata = (document.body.metadata ?? {}) as Record<string, unknown>;
    const spec = (document.body.spec ?? {}) as Record<string, unknown>;
    add(document.file, metadata.name, metadata.version, spec.type, spec.content, metadata.description);
  }
  const dir = path.join(projectDir, 'artifacts');
  for (const file of existsSync(dir) ? markdownFiles(dir) : []) {
    const relative = path.relative(projectDir, file);
    const text = readFileSync(file, 'utf8');
    const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
    if (!match) {
      problems.push(`${relative}: a prose artifact starts with front matter (--- name, type, version, description ---)`);
      continue;
    }
    let front: Record<string, unknown>;
    try {
      front = (parse(match[1]!) ?? {}) as Record<string, unknown>;
    } catch (error) {
      problems.push(`${relative}: front matter does not parse: ${(error as Error).message}`);
      continue;
    }
    add(relative, front.name, front.version, front.type, match[2]!, front.description);
  }
  return { artifacts, problems };
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const full = path.join(dir, entry);
      return statSync(full).isDirectory() ? markdownFiles(full) : entry.endsWith('.md') ? [full] : [];
    });
}
