// Reading the project: every YAML file under the project dir, dispatched by `kind`, versions kept apart.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface ProjectDocument {
  kind: string;
  name: string;
  /** `metadata.schema_version`, default `v1`. */
  version: string;
  /** Path relative to the project dir. */
  file: string;
  /** The parsed document (plain JSON values). */
  body: Record<string, unknown>;
}

export interface DocumentProblem {
  file: string;
  message: string;
}

const SKIPPED_DIRS = new Set(['node_modules', '.git', '.svc', 'dist', 'test', 'bench', 'db', 'src', 'coverage']);
const YAML_FILE = /\.ya?ml$/i;

/** Loads every document with a `kind`; files that fail to parse are reported, not thrown. */
export function loadProjectDocuments(projectDir: string): { documents: ProjectDocument[]; problems: DocumentProblem[] } {
  const documents: ProjectDocument[] = [];
  const problems: DocumentProblem[] = [];
  for (const file of yamlFiles(projectDir)) {
    const relative = path.relative(projectDir, file);
    let parsed: unknown[];
    try {
      parsed = parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
        if (doc.errors.length > 0) throw doc.errors[0];
        return doc.toJS({ maxAliasCount: 100 }) as unknown;
      });
    } catch (error) {
      problems.push({ file: relative, message: `YAML does not parse: ${(error as Error).message}` });
      continue;
    }
    for (const body of parsed) {
      if (!isRecord(body) || typeof body.kind !== 'string') continue;
      const metadata = isRecord(body.metadata) ? body.metadata : {};
      if (typeof metadata.name !== 'string' || metadata.name.length === 0) {
        if (body.kind !== 'SystemConfig') problems.push({ file: relative, message: `${body.kind} without metadata.name` });
        continue;
      }
      documents.push({
        kind: body.kind,
        name: metadata.name,
        version: typeof metadata.schema_version === 'string' ? metadata.schema_version : String(metadata.schema_version ?? 'v1'),
        file: relative,
        body,
      });
    }
  }
  return { documents, problems };
}

function yamlFiles(dir: string): string[] {
  const found: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.startsWith('.') || SKIPPED_DIRS.has(entry)) continue;
    const full = path.join(dir, entry);
    const stat = statSync(full);
    if (stat.isDirectory()) found.push(...yamlFiles(full));
    else if (YAML_FILE.test(entry) && entry !== 'docker-compose.yml' && entry !== 'svc.yaml') found.push(full);
  }
  return found;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
