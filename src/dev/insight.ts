// The /insight page: a small console over the API (workflows, runs with a live timeline, approvals,
// models, users, artifacts, API docs). Plain HTML with no data in it; its script is a served file.

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function insightPage(options: { embedKey: string | undefined }): string {
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
  .key { margin-left: auto; }
</style>
</head>
<body>
<header><strong>svc insight</strong>
  <nav id="tabs"></nav>
  <span class="key">dev key <input id="key" placeholder="XXXX-XXXX-XXXX-XXXX"></span>
</header>
<main id="main"></main>
<script src="/insight/insight.js"></script>
</body>
</html>`;
}
