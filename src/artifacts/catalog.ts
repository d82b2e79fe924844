// The artifacts a workflow can use: project files (in memory) and uploads (the database, so an upload
// is visible to every worker at once). Project files are deployment files, shared by every tenant; an
// upload belongs to the uploader's tenant, which alone lists, reads, versions and resolves it. A project
// file owns its name in every tenant: uploads for it are refused, and uploads stored before the file
// appeared are hidden while it is there (listed only as a count).
import type { Pool } from '../db/pool.js';
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import { AppError, BadRequestError, ConflictError, NotFoundError } from '../kernel/errors.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import {
  ARTIFACT_NAME,
  compareArtifactVersions,
  contentBytes,
  contentHash,
  MAX_ARTIFACT_BYTES,
  parseArtifactRef,
  PROSE_TYPES,
  type Artifact,
  type ArtifactType,
} from './artifact.js';
import { allUploadedVersions, tenantUploads, type UploadRow } from './queries.js';

const toArtifact = (row: UploadRow): Artifact => ({
  name: row.name,
  version: row.version,
  type: row.type,
  content: row.content,
  hash: row.hash,
  description: row.description,
  source: 'upload',
  createdAt: row.created_at,
});

/**
 * Outside multi-tenant deployments `artifact-<name>`, as it always was (logs replay unchanged); a
 * tenant's uploads go to `artifact-<tenant>/<name>` (a name holds no `/`, so the two never meet).
 */
export const artifactStream = (name: string, tenant: string | null) => (tenant === null ? `artifact-${name}` : `artifact-${tenant}/${name}`);

/**
 * An uploaded MCP server is reached over HTTP only: a stdio `command` would run a program on this
 * server for anyone holding artifacts:write, so it can only come from the project's artifacts/ folder.
 */
const uploadedMcpServer = compileValidator<JsonObject>(
  {
    type: 'object',
    properties: {
      url: { type: 'string', pattern: '^https?://', maxLength: 2048 },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    },
    required: ['url'],
    additionalProperties: false,
  },
  'body',
);

export class ArtifactCatalog {
  private readonly project: Map<string, Artifact>;

  constructor(
    private readonly pool: Pool,
    projectArtifacts: Artifact[],
    private readonly store?: EventStore,
    private readonly clock?: Clock,
  ) {
    this.project = new Map(projectArtifacts.map((a) => [a.name, a]));
  }

  projectArtifact(name: string): Artifact | undefined {
    return this.project.get(name);
  }

  /** Every artifact the tenant can use, with the versions a read can return; a project file's name lists the file alone. */
  async list(tenant: string | null): Promise<JsonObject[]> {
    const rows = await tenantUploads(this.pool, tenant);
    const names = [...new Set([...this.project.keys(), ...rows.map((r) => r.name)])].sort();
    return names.map((name) => {
      const file = this.project.get(name);
      const uploads = rows.filter((r) => r.name === name).sort((a, b) => compareArtifactVersions(a.version, b.version));
      if (file) {
        const version = { version: file.version, source: 'project', hash: file.hash, description: file.description, created_at: null };
        return { name, type: file.type, source: 'project', latest_version: file.version, versions: [version], shadowed_uploads: uploads.length };
      }
      const versions = uploads.map((u) => ({ version: u.version, source: 'upload', hash: u.hash, description: u.description, created_at: u.created_at }));
      const latest = uploads.at(-1)!;
      return { name, type: latest.type, source: 'upload', latest_version: latest.version, versions, shadowed_uploads: 0 };
    });
  }

  /** A project file always wins its name; otherwise the tenant's upload of that version, or its latest. */
  async get(tenant: string | null, name: string, version?: string): Promise<Artifact | undefined> {
    const file = this.project.get(name);
    if (file) return version === undefined || version === file.version ? file : undefined;
    const sorted = (await tenantUploads(this.pool, tenant, name)).sort((a, b) => compareArtifactVersions(a.version, b.version));
    const row = version === undefined ? sorted.at(-1) : sorted.find((r) => r.version === version);
    return row ? toArtifact(row) : undefined;
  }

  /** Resolves `artifact://name[@version]` for a run of `tenant`; strings that are no reference answer undefined. */
  async resolve(tenant: string | null, value: unknown, expectedType?: ArtifactType): Promise<Artifact | undefined> {
    const ref = parseArtifactRef(value);
    if (!ref) return undefined;
    const artifact = await this.get(tenant, ref.name, ref.version);
    if (!artifact) throw new NotFoundError(`${String(value)} does not resolve to an artifact${tenant === null ? '' : ` of tenant ${tenant}`}`);
    if (expectedType && artifact.type !== expectedType) throw new BadRequestError(`${String(value)} is a ${artifact.type}, not a ${expectedType}`);
    return artifact;
  }

  /** Every uploaded version of every tenant (boot validation of artifact references). */
  uploadedVersions(): ReturnType<typeof allUploadedVersions> {
    return allUploadedVersions(this.pool);
  }

  /** Uploads a new version of the tenant's artifact (its next integer); never overwrites. */
  async upload(
    tenant: string | null,
    input: { name: string; type: ArtifactType; content: JsonValue; description?: string },
    metadata?: EventMetadata,
  ): Promise<Artifact> {
    if (!this.store || !this.clock) throw new Error('this catalog is read-only');
    const { name, type, content } = input;
    if (!ARTIFACT_NAME.test(name)) throw new BadRequestError('name must be letters, digits, _ . - (at most 128, starting with a letter or digit)');
    const isProse = PROSE_TYPES.includes(type);
    if (isProse ? typeof content !== 'string' : typeof content !== 'object' || content === null || Array.isArray(content)) {
      throw new BadRequestError(`a ${type} artifact takes ${isProse ? 'text' : 'a JSON object'} as content`);
    }
    if (contentBytes(content) > MAX_ARTIFACT_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `artifact content is larger than ${MAX_ARTIFACT_BYTES} bytes`);
    if (type === 'mcp') {
      if ('command' in (content as JsonObject)) {
        throw new BadRequestError(
          "an uploaded mcp artifact names a url: a stdio command runs a program on the server, so only the project's artifacts/ folder may declare one",
        );
      }
      uploadedMcpServer.parse(content);
    }
    // An upload the project file would hide could never be read back, so it is not stored at all.
    const file = this.project.get(name);
    if (file) throw new ConflictError(`artifact ${name} is the project file ${file.file ?? 'in artifacts/'}: change it there, or upload under another name`);
    const stream = artifactStream(name, tenant);
    const at = this.clock.now().toISOString();
    const { result } = await runCommand(this.store, {
      streams: [stream],
      decide: (read) => {
        const earlier = read.get(stream)!;
        const previousType = (earlier.at(-1)?.data as JsonObject | undefined)?.type;
        if (previousType !== undefined && previousType !== type) throw new ConflictError(`artifact ${name} is a ${String(previousType)}`);
        const version = String(earlier.length + 1);
        // Without a tenant the event is exactly what it always was.
        const data = {
          name,
          version,
          type,
          content,
          hash: contentHash(content),
          description: input.description ?? null,
          at,
          ...(tenant === null ? {} : { tenant }),
        };
        return { events: { [stream]: [{ type: 'ArtifactUploaded', data }] }, result: data };
      },
      ...(metadata ? { metadata } : {}),
    });
    // The stored row keeps the database's timestamp form; answer with what was stored.
    return { name, version: result.version, type, content, hash: result.hash, description: result.description, source: 'upload', createdAt: at };
  }
}
