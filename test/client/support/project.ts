// The fixture project the client tests run against: fast, slow (APICall), failing, human-waiting and gated workflows, two models.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLIENT_PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'project');
