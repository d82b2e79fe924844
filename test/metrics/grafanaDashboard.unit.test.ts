// docs/grafana/svc.json: a Grafana dashboard that parses, and whose queries name only series the
// service exports (the metrics table of docs/operations.md), covering every one of them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string; refId: string }[];
}

const dashboard = JSON.parse(readFileSync(path.join(REPO, 'docs/grafana/svc.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
};
/** The svc_* series named in the Metrics table of docs/operations.md. */
const documented = new Set([...readFileSync(path.join(REPO, 'docs/operations.md'), 'utf8').matchAll(/^\| `(svc_[a-z_]+)` \|/gm)].map((match) => match[1]!));
const queried = (panel: Panel) =>
  (panel.targets ?? []).flatMap((target) => [...target.expr.matchAll(/\b(svc_[a-z_]+?)(?:_bucket|_count|_sum)?\b/g)].map((m) => m[1]!));

describe('the Grafana dashboard', () => {
  it('is a dashboard with a Prometheus datasource variable, unique panel ids and a query in every graph', () => {
    expect(dashboard.uid).to.equal('svc-overview');
    expect(dashboard.templating.list.map((variable) => variable.name)).to.include.members(['datasource', 'instance']);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, panel.title).to.equal('${datasource}');
      expect(panel.targets, panel.title).to.have.length.greaterThan(0);
    }
  });

  it('queries only documented svc series, and every one of them', () => {
    expect(documented.size).to.be.greaterThan(5);
    const used = new Set(dashboard.panels.flatMap(queried));
    for (const name of used) expect(documented.has(name), `${name} is in docs/operations.md's metrics table`).to.equal(true);
    for (const name of documented) expect(used.has(name), `${name} has a panel`).to.equal(true);
  });
});
