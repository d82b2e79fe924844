// `svc validate [--strict]`: every finding with its V-code, file and step; exit 1 on errors (or warnings with --strict).
import { loadProject, type ProjectSettings } from '../app/project.js';
import { DOCUMENT_FLAGS } from '../versions/overrides.js';
import { formatFinding } from '../workflows/findings.js';
import { validateProject } from '../app/project.js';

export async function validateCommand(projectDir: string, settings: ProjectSettings, strict: boolean): Promise<number> {
  const project = await loadProject(projectDir, settings);
  for (const warning of project.warnings) process.stdout.write(`WARNING ${warning}\n`);
  const findings = validateProject(project, DOCUMENT_FLAGS);
  for (const finding of findings) process.stdout.write(`${formatFinding(finding)}\n`);
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors;
  process.stdout.write(`${project.workflows.length} workflows, ${project.models.length} models: ${errors} errors, ${warnings} warnings\n`);
  return errors > 0 || (strict && warnings > 0) ? 1 : 0;
}
