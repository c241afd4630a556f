"""Inline CSS and JavaScript of ``mapping.html`` (no network, no external files)."""

CSS = """
:root { --fg:#1f2328; --muted:#59636e; --bg:#fff; --alt:#f6f8fa; --line:#d1d9e0; --link:#0969da;
  --ok:#1a7f37; --okbg:#dafbe1; --part:#9a6700; --partbg:#fff8c5; --none:#59636e; --nonebg:#eaeef2;
  --err:#cf222e; --errbg:#ffebe9; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --alt:#151b23;
  --line:#3d444d; --link:#4493f8; --ok:#3fb950; --okbg:#12261e; --part:#d29922; --partbg:#272115;
  --none:#9198a1; --nonebg:#212830; --err:#f85149; --errbg:#2d1619; } }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color:var(--fg);
  background:var(--bg); }
header { padding:16px 24px 8px; }
h1 { font-size:20px; margin:0 0 4px; }
.sub { color:var(--muted); margin:0; }
form { display:flex; flex-wrap:wrap; gap:8px 12px; align-items:center; padding:8px 24px 12px;
  position:sticky; top:0; background:var(--bg); border-bottom:1px solid var(--line); z-index:2; }
input[type=search] { flex:1 1 220px; min-width:180px; padding:6px 10px; font:inherit; color:inherit;
  background:var(--bg); border:1px solid var(--line); border-radius:6px; }
select { padding:5px 6px; font:inherit; color:inherit; background:var(--bg); border:1px solid var(--line);
  border-radius:6px; max-width:170px; }
label { color:var(--muted); white-space:nowrap; }
#count { color:var(--muted); margin-left:auto; white-space:nowrap; }
main { padding:0 24px 24px; }
table { border-collapse:collapse; width:100%; table-layout:fixed; }
th, td { text-align:left; vertical-align:top; padding:5px 8px; border-bottom:1px solid var(--line);
  overflow-wrap:anywhere; }
th { font-weight:600; color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.03em; }
tbody tr:nth-child(even) { background:var(--alt); }
col.c-torch { width:22%; } col.c-ms { width:20%; } col.c-rel { width:14%; } col.c-notes { width:24%; }
code { font:12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
a { color:var(--link); text-decoration:none; } a:hover { text-decoration:underline; }
.ns { display:block; color:var(--muted); font-size:12px; }
.old { display:block; color:var(--muted); font-size:12px; } .muted { color:var(--muted); }
.badge { display:inline-block; padding:0 6px; margin:1px 2px 1px 0; border-radius:6px; font-size:12px;
  white-space:nowrap; }
.mapped { color:var(--ok); background:var(--okbg); } .partial { color:var(--part); background:var(--partbg); }
.none { color:var(--none); background:var(--nonebg); }
.rel { display:block; width:fit-content; max-width:100%; white-space:normal; overflow-wrap:anywhere; }
.sev-error { color:var(--err); background:var(--errbg); } .sev-warning { color:var(--part);
  background:var(--partbg); } .sev-info { color:var(--none); background:var(--nonebg); }
details { margin:8px 0 0; color:var(--muted); } details dl { display:grid; grid-template-columns:max-content 1fr;
  gap:2px 12px; margin:8px 0; } details dt { font-family:ui-monospace, monospace; }
details dd { margin:0; }
#more { margin:12px 0; padding:6px 14px; font:inherit; color:inherit; background:var(--alt);
  border:1px solid var(--line); border-radius:6px; cursor:pointer; }
.empty { padding:24px 0; color:var(--muted); }
"""

JS = r"""
(function () {
  var DATA = JSON.parse(document.getElementById('msmap-data').textContent);
  var rows = DATA.rows, PAGE = 300, limit = PAGE;
  var $ = function (id) { return document.getElementById(id); };
  var q = $('q'), ns = $('ns'), fam = $('fam'), rel = $('rel'), cov = $('cov'), cav = $('cav');
  var body = $('rows'), count = $('count'), more = $('more');
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fill(sel, values) {
    values.forEach(function (v) { var o = el('option', null, v); o.value = v; sel.appendChild(o); });
  }
  fill(ns, DATA.namespaces); fill(rel, DATA.relations);
  rows.forEach(function (r) {
    var rel = r.r.map(function (x) { return x[0] + ' ' + x[1]; }).join(' ');
    r.hay = [r.t, r.c ? r.c[0] : '', r.m ? r.m[0] : '', rel, r.o].join(' ').toLowerCase();
  });
  function matches(r, words) {
    if (ns.value && r.n !== ns.value) return false;
    if (fam.value && r.f.indexOf(fam.value) < 0) return false;
    if (rel.value && r.rs.indexOf(rel.value) < 0) return false;
    if (cov.value && r.g !== cov.value) return false;
    if (cav.checked && !r.cv) return false;
    for (var i = 0; i < words.length; i++) if (r.hay.indexOf(words[i]) < 0) return false;
    return true;
  }
  function dotted(text) {  // code element that prefers to wrap after dots
    var c = el('code');
    text.split('.').forEach(function (part, i) {
      if (i) { c.appendChild(document.createTextNode('.')); c.appendChild(el('wbr')); }
      c.appendChild(document.createTextNode(part));
    });
    return c;
  }
  function targetCell(td, cell) {
    if (!cell) return;
    td.appendChild(cell[0] ? dotted(cell[0]) : el('span', 'muted', 'no equivalent'));
    if (cell[1]) td.appendChild(el('span', 'old', cell[1]));
    if (cell[2]) td.appendChild(el('span', 'old', cell[2]));
  }
  function row(r) {
    var tr = el('tr'), td = el('td');
    if (r.p) { var a = el('a'); a.href = r.p; a.appendChild(dotted(r.t)); td.appendChild(a); }
    else td.appendChild(dotted(r.t));
    var nsl = el('a', 'ns', r.n); nsl.href = DATA.tables[r.n]; td.appendChild(nsl);
    tr.appendChild(td);
    td = el('td'); targetCell(td, r.c); tr.appendChild(td);
    td = el('td'); targetCell(td, r.m); tr.appendChild(td);
    td = el('td');
    r.r.forEach(function (x) {
      td.appendChild(el('span', 'badge rel ' + x[2], (x[0] ? x[0] + ': ' : '') + x[1]));
    });
    tr.appendChild(td);
    td = el('td', null, r.o);
    if (r.cv) {
      td.appendChild(document.createTextNode(' '));
      td.appendChild(el('span', 'badge sev-' + r.s, r.cv + (r.cv > 1 ? ' caveats' : ' caveat')));
    }
    tr.appendChild(td);
    return tr;
  }
  function state() {
    var s = new URLSearchParams();
    [['q', q.value], ['ns', ns.value], ['family', fam.value], ['relation', rel.value],
     ['coverage', cov.value], ['caveats', cav.checked ? '1' : '']].forEach(function (kv) {
      if (kv[1]) s.set(kv[0], kv[1]);
    });
    var h = s.toString();
    try { history.replaceState(null, '', h ? '#' + h : location.pathname + location.search); }
    catch (e) { /* some browsers refuse history changes on file:// pages; filtering still works */ }
  }
  function render(keepLimit) {
    if (!keepLimit) limit = PAGE;
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var hits = rows.filter(function (r) { return matches(r, words); });
    var frag = document.createDocumentFragment();
    hits.slice(0, limit).forEach(function (r) { frag.appendChild(row(r)); });
    body.replaceChildren(frag);
    count.textContent = hits.length + ' of ' + rows.length + ' torch APIs';
    more.hidden = hits.length <= limit;
    more.textContent = 'Show all ' + hits.length;
    $('empty').hidden = hits.length > 0;
    state();
  }
  function restore() {
    var s = new URLSearchParams(location.hash.slice(1));
    q.value = s.get('q') || ''; ns.value = s.get('ns') || ''; fam.value = s.get('family') || '';
    rel.value = s.get('relation') || ''; cov.value = s.get('coverage') || ''; cav.checked = !!s.get('caveats');
  }
  [q, ns, fam, rel, cov, cav].forEach(function (c) {
    c.addEventListener(c === q ? 'input' : 'change', function () { render(false); });
  });
  more.addEventListener('click', function () { limit = Infinity; render(true); });
  $('filters').addEventListener('submit', function (e) { e.preventDefault(); });
  restore(); render(false);
})();
"""
