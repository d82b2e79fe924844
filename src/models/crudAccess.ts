// Who may use a model's CRUD operations: the serving version, its access rules, and those of the models an include embeds.
import type { Request } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { isAllowed, type AccessRule } from '../kernel/access.js';
import { BadRequestError, NotFoundError, PermissionDeniedError } from '../kernel/errors.js';
import type { CrudOperation, ModelDefinition } from './definition.js';
import type { ResolvedRelation } from './queries.js';
import type { ModelRegistry } from './registry.js';

export function accessRule(model: ModelDefinition, operation: CrudOperation): AccessRule {
  const { access } = model;
  if (operation === 'list' || operation === 'read') return { scope: access.readScope, groups: access.readGroups };
  if (operation === 'delete') return { scope: access.deleteScope, groups: access.deleteGroups };
  return { scope: access.writeScope, groups: access.writeGroups };
}

export interface CrudAccess {
  /** The serving version of `/models/{model}`, if it exposes the operation (else the route is absent: 404), and the caller may use it. */
  authorize(req: Request, operation: CrudOperation): Promise<ModelDefinition>;
  /** The relations `include` names, each with its serving target model, which the caller must be able to read. */
  relationsFor(req: Request, model: ModelDefinition, include: string | undefined): Promise<ResolvedRelation[]>;
}

export function crudAccess(registry: ModelRegistry, authenticator: Authenticator): CrudAccess {
  return {
    async authorize(req, operation) {
      const model = registry.activeBySlug(String(req.params.model));
      if (!model || !model.crud.includes(operation)) throw new NotFoundError(`No route for ${req.method} ${req.path}`);
      const principal = await authenticator.principalOf(req);
      if (!isAllowed(principal, accessRule(model, operation))) throw new PermissionDeniedError(`Permission denied: ${operation} on ${model.slug}`);
      return model;
    },

    async relationsFor(req, model, include) {
      if (!include) return [];
      const principal = await authenticator.principalOf(req);
      return [
        ...new Set(
          include
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ].map((name) => {
        const relation = model.relations.find((r) => r.name === name);
        if (!relation) throw new BadRequestError(`include: ${model.name} has no relation ${name}`);
        const target = registry.active(relation.model);
        if (!target) throw new BadRequestError(`include: ${relation.model} is not enabled`);
        // Embedding a record is reading it: the caller needs the target's read access too.
        if (!isAllowed(principal, accessRule(target, 'read'))) throw new PermissionDeniedError(`Permission denied: read on ${target.slug}`);
        return { relation, target };
      });
    },
  };
}
