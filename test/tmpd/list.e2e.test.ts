import { startTestService } from '../support/service.js';
import { call } from '../support/http.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
describe('list', () => {
  it('lists', async () => {
    const service = await startTestService({ projectDir: EXAMPLE_PROJECT });
    const doc = (await call(service.url, 'GET', '/openapi.json')).body;
    for (const [p, item] of Object.entries<any>(doc.paths)) for (const m of Object.keys(item)) if (['post','put','patch','delete'].includes(m)) console.log(m.toUpperCase(), p, item[m].security ? JSON.stringify(item[m].security) : '', item[m]['x-required-scope'] ?? '');
    await service.close();
  });
});
