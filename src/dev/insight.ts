// The /insight page: a small console over the API (workflows, runs with a live timeline, approvals,
// models, users, artifacts, API docs). Plain HTML and script, served with no data in it.

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function insightPage(options: { embedKey: string | undefined; apiDocs: boolean }): string {
  const meta = options.embedKey ? `<meta name="svc-dev-key" content="${escapeAttribute(options.embedKey)}">` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${meta}
<title>svc insight</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: 10px 16px; display: flex; gap: 16px; align-items: center; }
  header a { color: #cfe0ff; cursor: pointer; text-decoration: none; }
  header a.active { color: #fff; font-weight: 600; }
  main { padding: 16px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; border-bottom: 1px solid #e3e6ec; padding: 6px 8px; vertical-align: top; }
  tr.clickable { cursor: pointer; } tr.clickable:hover { background: #f3f6fb; }
  pre { background: #f6f8fa; padding: 8px; overflow: auto; max-height: 420px; }
  .timeline li { margin: 2px 0; font-family: ui-monospace, monospace; font-size: 12px; }
  iframe { width: 100%; height: 80vh; border: 0; }
  #key { width: 20em; }
</style>
</head>
<body>
<header><strong>svc insight</strong>
  <nav id="tabs"></nav>
  <span style="margin-left:auto">dev key <input id="key" placeholder="XXXX-XXXX-XXXX-XXXX"></span>
</header>
<main id="main"></main>
<script>
const tabs = ['Workflows', 'Runs', 'Approvals', 'Models', 'Users', 'Artifacts', 'API docs'];
const keyInput = document.getElementById('key');
const embedded = document.querySelector('meta[name="svc-dev-key"]');
keyInput.value = embedded ? embedded.content : (sessionStorage.getItem('svc-dev-key') || '');
keyInput.addEventListener('change', () => { sessionStorage.setItem('svc-dev-key', keyInput.value); show(current); });
const headers = () => ({ authorization: 'Bearer ' + keyInput.value });
const main = document.getElementById('main');
let current = ${options.apiDocs ? "'API docs'" : "'Workflows'"};
let stream;
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => k.startsWith('on') ? node.addEventListener(k.slice(2), v) : node.setAttribute(k, v));
  children.flat().forEach((c) => node.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c))));
  return node;
}
async function get(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw new Error(path + ': ' + response.status + ' ' + (await response.text()));
  return response.json();
}
function table(columns, rows, onClick) {
  return el('table', {}, el('tr', {}, columns.map((c) => el('th', {}, c))),
    rows.map((row) => el('tr', onClick ? { class: 'clickable', onclick: () => onClick(row) } : {}, columns.map((c) => el('td', {}, typeof row[c] === 'object' ? JSON.stringify(row[c]) : row[c])))));
}
async function timeline(run) {
  if (stream) stream.abort();
  stream = new AbortController();
  const list = el('ol', { class: 'timeline' });
  main.replaceChildren(el('h3', {}, 'Run ' + run.id + ' (' + run.workflow + ')'), el('pre', {}, JSON.stringify(run, null, 2)), el('h4', {}, 'Events (live)'), list);
  const response = await fetch('/api/runs/' + run.id + '/events', { headers: headers(), signal: stream.signal });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\\n\\n')) >= 0) {
      const frame = buffer.slice(0, end); buffer = buffer.slice(end + 2);
      const data = frame.split('\\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\\n');
      if (data) { const event = JSON.parse(data); list.append(el('li', {}, event.seq + ' ' + event.ts + ' ' + event.type + ' ' + event.agent_id + ' ' + JSON.stringify(event.payload).slice(0, 200))); }
    }
  }
}
async function show(tab) {
  current = tab;
  if (stream) stream.abort();
  document.getElementById('tabs').replaceChildren(...tabs.map((t) => el('a', { class: t === tab ? 'active' : '', onclick: () => show(t) }, t + ' ')));
  try {
    if (tab === 'Workflows') {
      const manifests = await get('/api/_system/workflows');
      main.replaceChildren(table(['name', 'trigger_method', 'trigger_path', 'public', 'slow_kinds_present'], Object.entries(manifests).map(([name, m]) => ({ name, ...m }))));
    } else if (tab === 'Runs') {
      main.replaceChildren(table(['id', 'workflow', 'status', 'current_step', 'created_at'], await get('/api/runs?limit=100'), timeline));
    } else if (tab === 'Approvals') {
      main.replaceChildren(table(['approval_id', 'workflow', 'title', 'kind', 'required_group', 'created_at'], await get('/api/approvals')));
    } else if (tab === 'Models') {
      const models = await get('/admin/models');
      main.replaceChildren(table(['name', 'schema_version', 'enabled', 'tablename', 'fields'], Object.entries(models).flatMap(([name, versions]) => versions.map((v) => ({ name, ...v })))));
    } else if (tab === 'Users') {
      main.replaceChildren(table(['email', 'is_active', 'roles', 'created_at'], await get('/auth/admin/users')));
    } else if (tab === 'Artifacts') {
      main.replaceChildren(table(['name', 'type', 'source', 'latest_version'], await get('/api/artifacts')));
    } else {
      main.replaceChildren(el('iframe', { src: '/docs', title: 'API docs' }));
    }
  } catch (error) {
    main.replaceChildren(el('p', {}, String(error.message || error)));
  }
}
show(current);
</script>
</body>
</html>`;
}
