#!/usr/bin/env bash
# The HTML report rendered by a real headless Chromium (ctest report.chromium_render, label
# report): real tunings (test/data/cli/mm.yaml; test/data/report/hostile.yaml, whose compile error
# and parameter value carry markup) into a scratch cache, `ktune report`, then
#   1. --dump-dom of report.html#selftest: the page's script ran to its end, its self-test
#      passed (every table sorted by every column both ways, the filter, expand and collapse;
#      data-ktune-report="ready" and data-ktune-selftest="passed N" in the DOM), the
#      planted script did not run (no data-pwned) and shows as text, and Chromium logged no
#      console message (the page writes none: each is an uncaught error, a console.error or
#      something its Content-Security-Policy blocked, such as a network load);
#   2. --screenshot at 1200x2000: a PNG of that size that is not blank.
# The console check is first shown to catch a page that throws (a page made to fail), so that
# a Chromium whose log format changed cannot pass silently.
# Usage: chromium_render.sh KTUNE_CLI SOURCE_DIR OUT_DIR. Exit 77 (skipped) without chromium,
# unless CI=true: then chromium is required.
set -euo pipefail
cli=$1 src=$2 out=$3

browser=${KTUNE_CHROMIUM:-}
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
  done
fi
if [ -z "$browser" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: chromium not found and CI=true (make report-deps installs the Debian package chromium)"
    exit 1
  fi
  echo "SKIP: chromium not found (apt-get install chromium, or set KTUNE_CHROMIUM)"
  exit 77
fi

rm -rf "$out"
mkdir -p "$out"
chmod 700 "$out"
cache="$out/cache"
mkdir -m 700 "$cache"

fail() { echo "FAIL: $*"; exit 1; }

# Chromium with its profile in $out, no background network, no first-run work; its log to LOG.
render() {  # render LOG ARGS...
  local log=$1; shift
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$out/profile" --disable-extensions --disable-background-networking \
    --disable-dev-shm-usage \
    --enable-logging=stderr --v=0 "$@" 2>"$log"
}
# Every console message, as Chromium logs them with --enable-logging ("INFO:CONSOLE:LINE] ..."
# whatever the level): the report writes none, so each is an error (an uncaught exception, a
# console.error, a load or script that its Content-Security-Policy blocked).
console_errors() { grep -E ':CONSOLE[:(]|Uncaught' "$1" || true; }

# 1. The check catches a failing page.
cat >"$out/broken.html" <<'HTML'
<!DOCTYPE html><html><body><p>broken</p><script>null.property;</script></body></html>
HTML
render "$out/broken.log" --dump-dom "file://$out/broken.html" >"$out/broken.dom" || true
if [ -z "$(console_errors "$out/broken.log")" ]; then
  cat "$out/broken.log"
  fail "a page that throws was not seen in Chromium's log: the console check would not work"
fi

# 2. Real records, then the report.
"$cli" --cache-dir "$cache" tune "$src/test/data/cli/mm.yaml" --budget-ms 2 -q >"$out/tune.log" 2>&1 ||
  { cat "$out/tune.log"; fail "ktune tune mm.yaml"; }
"$cli" --cache-dir "$cache" tune "$src/test/data/report/hostile.yaml" --budget-ms 2 -q \
  >>"$out/tune.log" 2>&1 || { cat "$out/tune.log"; fail "ktune tune hostile.yaml"; }
"$cli" --cache-dir "$cache" report -o "$out/report.html" ||
  fail "ktune report"
grep -q 'document.body.setAttribute(&#39;data-pwned&#39;' "$out/report.html" ||
  fail "the planted compile error is not in the report"

# 3. The DOM after every script ran.
start=$SECONDS
render "$out/dom.log" --dump-dom "file://$out/report.html#selftest" >"$out/report.dom" ||
  { cat "$out/dom.log"; fail "chromium --dump-dom exited with an error"; }
grep -q 'data-ktune-report="ready"' "$out/report.dom" ||
  { cat "$out/dom.log"; fail "the report's script did not run to its end (no ready marker)"; }
# #selftest: every table column sorted (and checked) both ways, the filter, expand and collapse.
grep -qE 'data-ktune-selftest="passed [1-9][0-9]*"' "$out/report.dom" ||
  { grep -o 'data-ktune-selftest="[^"]*"' "$out/report.dom"; fail "the page's self-test failed"; }
if grep -E '<body[^>]*data-pwned' "$out/report.dom"; then fail "the planted script ran"; fi
grep -q '&lt;script&gt;document.body.setAttribute' "$out/report.dom" ||
  fail "the planted script does not show as text in the rendered page"
grep -q '&lt;b onmouseover=alert(2)&gt;bold&lt;/b&gt;' "$out/report.dom" ||
  fail "the markup in a parameter value does not show as text"
if grep -q '<img src="x"' "$out/report.dom"; then fail "planted markup became an element"; fi
errors=$(console_errors "$out/dom.log")
if [ -n "$errors" ]; then echo "$errors"; fail "console errors while rendering the report"; fi

# 4. The screenshot.
render "$out/shot.log" --screenshot="$out/report.png" --window-size=1200,2000 \
  "file://$out/report.html" >/dev/null || { cat "$out/shot.log"; fail "chromium --screenshot"; }
[ -s "$out/report.png" ] || fail "no screenshot written"
[ "$(head -c 8 "$out/report.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
  fail "the screenshot is not a PNG"
# IHDR: width and height, big-endian, at bytes 16..23.
size=$(od -An -tu1 -j16 -N8 "$out/report.png" | tr -s ' ' | sed 's/^ //')
read -r w0 w1 w2 w3 h0 h1 h2 h3 <<<"$size"
width=$(( (w0 << 24) | (w1 << 16) | (w2 << 8) | w3 ))
height=$(( (h0 << 24) | (h1 << 16) | (h2 << 8) | h3 ))
[ "$width" -eq 1200 ] && [ "$height" -eq 2000 ] || fail "screenshot is ${width}x${height}, not 1200x2000"
# A blank 1200x2000 page compresses to a few KiB; the report's text and charts do not.
bytes=$(stat -c %s "$out/report.png")
[ "$bytes" -gt 60000 ] || fail "screenshot of $bytes bytes: the page looks blank"
errors=$(console_errors "$out/shot.log")
if [ -n "$errors" ]; then echo "$errors"; fail "console errors while taking the screenshot"; fi
rm -rf "$out/profile"
echo "ok: report rendered by $("$browser" --version 2>/dev/null | head -1) in $((SECONDS - start)) s;" \
  "screenshot $out/report.png ($bytes bytes)"
