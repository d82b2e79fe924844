// Toggling and forking definition versions: events first-class, fork files created exclusively.
import { mkdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata, RecordedEvent } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import { AlreadyExistsError, BadRequestError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { definitionStream, type DefinitionKind } from './events.js';

/**
 * A plain version token such as v2 or v1.1: at most 32 letters, digits, `_`, `-` and single dots
 * between them (as schema_version allows), so no path separator, no `..`, no leading or trailing
 * dot, and no file extension of its own.
 */
export const VERSION_TOKEN = /^(?=.{1,32}$)(?!.*\.(ya?ml|json)$)[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)*$/i;

export interface ForkRequest {
  kind: DefinitionKind;
  name: string;
  sourceVersion: string;
  newVersion: string;
  /** The source document as written; copied with the new version stamped. */
  source: Record<string, unknown>;
  /** Absolute folder the fork is written into (the project's workflows/ or models/). */
  folder: string;
  fileStem: string;
}

export class VersionCommands {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projectDir: string,
  ) {}

  /** Flips the version's flag (from its current effective value) and answers the new value. */
  async toggle(kind: DefinitionKind, name: string, version: string, enabledByDefault: boolean, metadata?: EventMetadata): Promise<boolean> {
    const stream = definitionStream(kind, name);
    const { result } = await runCommand(this.store, {
      streams: [stream],
      decide: (read) => {
        const enabled = !currentFlag(read.get(stream)!, version, enabledByDefault);
        return {
          events: { [stream]: [{ type: 'DefinitionVersionToggled', data: { kind, name, version, enabled, at: this.clock.now().toISOString() } }] },
          result: enabled,
        };
      },
      ...(metadata ? { metadata } : {}),
    });
    return result;
  }

  /**
   * Writes `<folder>/<stem>_<new>.yaml` with O_EXCL (two concurrent forks: one wins, one 409), then
   * records the fork; the file is removed again if recording fails.
   */
  async fork(request: ForkRequest, metadata?: EventMetadata): Promise<{ file: string }> {
    const { kind, name, sourceVersion, newVersion } = request;
    if (!VERSION_TOKEN.test(newVersion))
      throw new BadRequestError('new_version must be a plain version token like v2 or v1.1 (letters, digits, -, _ and single dots between them)');
    const folder = path.resolve(request.folder);
    const target = path.resolve(folder, `${request.fileStem}_${newVersion}.yaml`);
    if (path.dirname(target) !== folder) throw new BadRequestError('new_version would leave the project folder');
    const definition = structuredClone(request.source) as JsonObject;
    const metadataOfDoc = (definition.metadata ?? {}) as JsonObject;
    // A fork starts disabled: it serves nothing until an admin enables it.
    definition.metadata = { ...metadataOfDoc, schema_version: newVersion, enabled: false };
    await mkdir(folder, { recursive: true });
    try {
      await writeFile(target, stringify(definition), { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new AlreadyExistsError(`${path.basename(target)} already exists`);
      throw error;
    }
    const file = path.relative(this.projectDir, target);
    const stream = definitionStream(kind, name);
    try {
      await runCommand(this.store, {
        streams: [stream],
        decide: (read) => {
          if (read.get(stream)!.some((e) => e.type === 'DefinitionVersionForked' && (e.data as JsonObject).newVersion === newVersion)) {
            throw new AlreadyExistsError(`${name} ${newVersion} already exists`);
          }
          const at = this.clock.now().toISOString();
          return {
            events: { [stream]: [{ type: 'DefinitionVersionForked', data: { kind, name, sourceVersion, newVersion, file, definition, at } }] },
            result: undefined,
          };
        },
        ...(metadata ? { metadata } : {}),
      });
    } catch (error) {
      await unlink(target).catch(() => undefined);
      throw error;
    }
    return { file };
  }
}

function currentFlag(events: RecordedEvent[], version: string, byDefault: boolean): boolean {
  let enabled = byDefault;
  for (const event of events) {
    const data = event.data as JsonObject;
    if (event.type === 'DefinitionVersionToggled' && data.version === version) enabled = Boolean(data.enabled);
    if (event.type === 'DefinitionVersionForked' && data.newVersion === version) enabled = false;
  }
  return enabled;
}
