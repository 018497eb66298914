// The look every estuary status page shares (discovery's caches, the coordinator's drones): plain
// HTML that refreshes itself, needs no JavaScript, fits 1024 px, and escapes everything it shows.
// State classes colour a row; the words beside them carry the same meaning without colour.

export const esc = (s: unknown): string =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

const STYLE = `body{font-family:system-ui,sans-serif;margin:1em;max-width:1000px;color:#222}
table{border-collapse:collapse;width:100%;font-size:14px;margin-bottom:1.5em}td,th{border-bottom:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eee}.num{text-align:right}.s-failing,.s-error,.s-lost{background:#fdd}.s-late,.s-drift,.s-draining{background:#ffe9b3}
.s-pending,.s-booting,.s-requested,.s-integrating{background:#eef}.s-unchecked,.s-down,.s-left{background:#f3f3f3}.over{color:#b00;font-weight:bold}
.facts{color:#555;font-size:13px}.sum{font-size:16px}.wrap{overflow-wrap:anywhere}`;

export function htmlPage(title: string, body: string, refreshS: number): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${refreshS}">
<meta name="viewport" content="width=device-width"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body>
${body}
</body></html>
`;
}
