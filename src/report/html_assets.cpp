// The report document's fixed parts (html_assets.h): the style sheet, the script, and the
// SHA-256 of the script for the Content-Security-Policy (libcrypto).
#include "report/html_assets.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

namespace ktune::report_internal {

// ------------------------------------------------------------------------------------------
// The document's fixed parts.

constexpr std::string_view kStyle = R"css(
:root{--blue:#2563eb;--amber:#d97706;--slate:#64748b;--red:#b91c1c;--green:#15803d;--line:#e2e8f0}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#0f172a;background:#f8fafc}
header{background:#0f172a;color:#f8fafc;padding:18px 28px}
header h1{margin:0 0 4px;font-size:22px}
header .meta{color:#cbd5e1;font-size:13px}
header code{background:#1e293b;color:#e2e8f0}
main{max-width:1240px;margin:0 auto;padding:16px 24px 48px}
code,pre,.pkey{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
code{background:#f1f5f9;padding:1px 4px;border-radius:4px;word-break:break-all}
pre{background:#0f172a;color:#e2e8f0;padding:10px 12px;border-radius:6px;overflow:auto;max-height:320px;white-space:pre-wrap;word-break:break-all;margin:6px 0}
.toolbar{display:flex;gap:8px;align-items:center;margin:4px 0 12px}
.toolbar input{flex:1;max-width:420px;padding:6px 10px;border:1px solid #cbd5e1;border-radius:6px;font:inherit}
.toolbar button{padding:6px 12px;border:1px solid #cbd5e1;background:#fff;border-radius:6px;font:inherit;cursor:pointer}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f5f9;position:sticky;top:0;cursor:pointer;user-select:none;white-space:nowrap}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
td[data-v]{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.pkey{min-width:300px;max-width:460px;word-break:break-all}
tr.win td{background:#eff6ff;font-weight:600}
.params{font-family:"DejaVu Sans Mono",monospace;font-size:11px;color:#334155}
.info{color:var(--slate);font-size:11px}
.o-ok{color:var(--green)}.o-bad{color:var(--red)}.o-quiet{color:var(--slate)}
.scroll{overflow-x:auto}
section.problem{background:#fff;border:1px solid var(--line);border-radius:8px;margin:14px 0;box-shadow:0 1px 2px #0f172a0d}
details.rec>summary{padding:10px 14px;cursor:pointer;font-size:15px;list-style-position:inside}
details.rec>summary .op{font-weight:700}
details.rec>summary .pkey{color:#475569;word-break:break-all}
details.rec>summary .pick{color:var(--blue);font-weight:600}
.body{padding:0 16px 14px;border-top:1px solid var(--line)}
.top{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:18px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 12px;margin:12px 0}
dt{color:var(--slate)}dd{margin:0;word-break:break-word}
.conf{align-self:start;background:#f8fafc;border:1px solid var(--line);border-radius:8px;padding:4px 14px;margin-top:12px}
.conf dl{grid-template-columns:max-content minmax(0,1fr)}
h3{font-size:15px;margin:18px 0 6px}
.note{color:var(--slate);font-size:12px;margin:4px 0}
.badge{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.badge.green{background:var(--green)}.badge.red{background:var(--red)}.badge.grey{background:var(--slate)}
svg text{font-family:"DejaVu Sans",sans-serif}
.chart .lbl{font:11px "DejaVu Sans Mono",monospace;text-anchor:end;fill:#334155}
.chart .tick{font-size:10px;fill:var(--slate);text-anchor:middle}
.chart .val{font-size:11px;fill:#334155}
.grid{stroke:var(--line);stroke-width:1}
.axis{stroke:#94a3b8;stroke-width:1}
.wh{stroke-width:1.5}.med{stroke-width:3}
.oth .wh,.oth .med{stroke:var(--slate)}.oth .box{fill:#cbd5e1}
.win .wh,.win .med{stroke:var(--blue)}.win .box{fill:#bfdbfe}.win .lbl{fill:var(--blue);font-weight:700}
.ru .wh,.ru .med{stroke:var(--amber)}.ru .box{fill:#fde68a}.ru .lbl{fill:var(--amber)}
.pgrid{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:10px}
.pcard{margin:0;border:1px solid var(--line);border-radius:8px;padding:6px 8px;background:#fff}
.pcard figcaption{font:600 12px "DejaVu Sans Mono",monospace;word-break:break-all}
.pcard .bar{fill:#94a3b8}.pcard .win .bar{fill:var(--blue)}
.pcard .best{fill:#0f172a}
.pcard .btxt{font-size:9px;text-anchor:middle;fill:#334155}
.pcard .xtick{font-size:10px;text-anchor:middle;fill:#334155}
.pcard .ytick{font-size:9px;text-anchor:end;fill:var(--slate)}
.pcard .tick{font-size:10px;text-anchor:middle;fill:var(--slate)}
.pcard .xfail{font-size:12px;text-anchor:middle;fill:var(--red)}
details.fail{border-left:3px solid var(--red);padding:2px 10px;margin:6px 0;background:#fef2f2;border-radius:0 6px 6px 0}
details.fail.quiet{border-left-color:var(--slate);background:#f8fafc}
details.fail>summary{cursor:pointer}
.fgroup{margin:6px 0 10px}.fnames{font-size:12px}
details.all{margin-top:14px}details.all>summary{cursor:pointer;font-weight:600}
.empty{padding:40px;text-align:center;color:var(--slate);font-size:16px}
@media (max-width:900px){.top{grid-template-columns:1fr}}
)css";

// Sorts a table by the clicked column (numbers from data-v), filters problems by the text of
// their summary, opens every section or none, and opens the section a link points to; with
// #selftest, exercises all of that. The last line marks the document as fully scripted (the
// headless-browser test reads both).
constexpr std::string_view kScript = R"js(
(function () {
  'use strict';
  function each(list, f) { Array.prototype.forEach.call(list, f); }
  function key(cell) {
    var v = cell.getAttribute('data-v');
    return v === null ? cell.textContent.toLowerCase() : parseFloat(v);
  }
  each(document.querySelectorAll('table.sortable'), function (table) {
    var heads = table.tHead.rows[0].cells;
    each(heads, function (th, col) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('data-dir') !== 'asc';
        each(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', asc ? 'asc' : 'desc');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var sections = document.querySelectorAll('section.problem');
  var rows = document.querySelectorAll('table.overview tbody tr');
  var filter = document.getElementById('filter');
  if (filter) {
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      each(sections, function (s) {
        s.hidden = q !== '' && s.querySelector('summary').textContent.toLowerCase().indexOf(q) < 0;
      });
      each(rows, function (r) {
        r.hidden = q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  }
  function setAll(open) {
    each(document.querySelectorAll('details.rec'), function (d) { d.open = open; });
  }
  var expand = document.getElementById('expand');
  var collapse = document.getElementById('collapse');
  if (expand) expand.addEventListener('click', function () { setAll(true); });
  if (collapse) collapse.addEventListener('click', function () { setAll(false); });
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var s = id ? document.getElementById(id) : null;
    var d = s ? s.querySelector('details.rec') : null;
    if (d) { d.open = true; s.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  // report.html#selftest (the headless-browser test): every column sorted both ways and checked
  // ascending, the filter applied and cleared, every section collapsed and opened again.
  if (location.hash === '#selftest') {
    var ok = true, sorted = 0;
    each(document.querySelectorAll('table.sortable'), function (table) {
      each(table.tHead.rows[0].cells, function (th, col) {
        th.click();
        var prev = null;
        each(table.tBodies[0].rows, function (r) {
          var k = key(r.cells[col]);
          if (prev !== null && k < prev) ok = false;
          prev = k;
        });
        th.click();
        sorted++;
      });
    });
    if (filter) {
      filter.value = '\u0000 matches nothing';
      filter.dispatchEvent(new Event('input'));
      each(sections, function (s) { if (!s.hidden) ok = false; });
      filter.value = '';
      filter.dispatchEvent(new Event('input'));
      each(sections, function (s) { if (s.hidden) ok = false; });
    }
    setAll(false);
    setAll(true);
    document.body.setAttribute('data-ktune-selftest', (ok ? 'passed ' : 'failed ') + sorted);
  }
  document.body.setAttribute('data-ktune-report', 'ready');
})();
)js";

std::string sha256_base64(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &n, EVP_sha256(), nullptr) != 1) return {};
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), md.data(), static_cast<int>(n));
  out.resize(static_cast<std::size_t>(std::max(len, 0)));
  return out;
}

}  // namespace ktune::report_internal
