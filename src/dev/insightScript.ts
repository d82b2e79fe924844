// The /insight page's script, served as /insight/insight.js: the page's CSP runs no inline script.
// It reads the dev key from the page's svc-dev-key meta tag (auto-login) or asks for it.

export const INSIGHT_SCRIPT = `const tabs = ['Workflows', 'Runs', 'Approvals', 'Models', 'Users', 'Artifacts', 'API docs'];
const keyInput = document.getElementById('key');
const embedded = document.querySelector('meta[name="svc-dev-key"]');
keyInput.value = embedded ? embedded.content : (sessionStorage.getItem('svc-dev-key') || '');
keyInput.addEventListener('change', () => { sessionStorage.setItem('svc-dev-key', keyInput.value); show(current); });
const headers = () => ({ authorization: 'Bearer ' + keyInput.value });
const main = document.getElementById('main');
let current = location.pathname.endsWith('/api-docs') ? 'API docs' : 'Workflows';
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
`;
