#include "report/page_style.h"

namespace kestrel::report {

const char kPageCss[] = R"css(
:root { --ink: #212121; --muted: #757575; --line: #e0e0e0; --accent: #1565c0; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto;
       max-width: 1100px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; border-bottom: 2px solid var(--line); padding-bottom: 4px;
  margin-top: 28px; } h3 { font-size: 16px; margin: 0 0 8px; } h4 { font-size: 14px; margin: 14px 0 6px; }
h5 { font-size: 12px; margin: 8px 0 2px; color: var(--muted); }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
nav a { margin-right: 12px; }
.muted { color: var(--muted); }
table { border-collapse: collapse; margin: 6px 0; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #fafafa; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts th { width: 110px; }
tr.total td { font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
svg.chart { width: 100%; height: auto; background: #fff; }
.charts.single { grid-template-columns: minmax(420px, 760px); }
svg.chart .frame { fill: none; stroke: #9e9e9e; } svg.chart .grid { stroke: #eeeeee; }
svg.chart .tick { font-size: 10px; fill: #616161; } svg.chart .axis { font-size: 11px; fill: #424242; }
svg.chart .best { fill: none; stroke: #2e7d32; stroke-width: 2; }
svg.chart circle.measured { fill: #66bb6a; fill-opacity: .75; stroke: #2e7d32; stroke-width: .5; }
svg.chart path.confirmed { fill: #1565c0; stroke: #0d47a1; }
svg.chart .ceiling { fill: none; stroke: #ef6c00; stroke-width: 1.5; }
.graph { overflow: auto; max-height: 720px; border: 1px solid var(--line); }
.graph svg { max-width: 100%; height: auto; }
.status { font-size: 12px; padding: 1px 6px; border-radius: 8px; background: #eeeeee; }
.s-measured { background: #c8e6c9; } .s-wrong, .s-crashed { background: #ffcdd2; } .s-timed_out { background: #ffe0b2; }
.s-build_failed { background: #d7ccc8; } .s-rejected { background: #cfd8dc; }
.s-running { background: #bbdefb; } .s-finished { background: #c8e6c9; } .s-failed { background: #ffcdd2; }
.s-interrupted { background: #ffe0b2; }
.node-page { border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 14px 0; }
.node-page:target { border-color: var(--accent); box-shadow: 0 0 0 2px #bbdefb; }
pre { background: #f7f7f7; border: 1px solid #eeeeee; padding: 8px; overflow: auto; max-height: 420px;
      font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-word; }
pre.diff ins { background: #e8f5e9; text-decoration: none; display: block; }
pre.diff del { background: #ffebee; text-decoration: none; display: block; }
pre.diff .fold { color: var(--muted); }
.message .role { font-size: 11px; text-transform: uppercase; color: var(--muted); }
details summary { cursor: pointer; }
.live { position: fixed; top: 8px; right: 12px; font-size: 12px; background: #e3f2fd; padding: 2px 8px;
        border-radius: 8px; }
.act { margin: 0.4em 0; } .act input, .act select, .act button, .people-bar input { font: inherit; }
.people-bar { margin: 0.3em 0; font-size: 0.9em; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  nav, .live, .back, .act, .people-bar { display: none; }
  pre { max-height: none; overflow: visible; }
  .graph { max-height: none; overflow: visible; border: none; }
  .node-page { break-inside: avoid-page; border: none; border-top: 1px solid #9e9e9e; border-radius: 0; }
  h2 { break-after: avoid; } section.node-page { break-before: auto; }
  a { color: inherit; }
}
)css";

const char kPrintScript[] = R"js(
window.addEventListener('beforeprint', () => {
  for (const details of document.querySelectorAll('details')) details.open = true;
});
)js";

const char kLiveScript[] = R"js(
(() => {
  const meta = (name) => document.querySelector('meta[name="' + name + '"]');
  const url = meta('kestrel-version-url').content;
  async function poll() {
    try {
      const reply = await fetch(url, {cache: 'no-store'});
      if (reply.ok) {
        const version = JSON.stringify(await reply.json());
        if (version !== meta('kestrel-version').content) {
          const page = await fetch(location.href, {cache: 'no-store'});
          if (page.ok) {
            const fresh = new DOMParser().parseFromString(await page.text(), 'text/html');
            const scroll = window.scrollY;
            // What a person is typing (a review's edit, a reason) survives the refresh.
            const kept = {};
            for (const box of document.querySelectorAll('[data-keep]')) if (box.id) kept[box.id] = box.value;
            document.body.replaceWith(document.adoptNode(fresh.body));
            for (const [id, value] of Object.entries(kept)) {
              const box = document.getElementById(id);
              if (box) box.value = value;
            }
            if (window.kestrelRestore) kestrelRestore();
            meta('kestrel-version').content = fresh.querySelector('meta[name="kestrel-version"]').content;
            window.scrollTo(0, scroll);
          }
        }
      }
    } catch (error) {
      // The server may be restarting: try again at the next tick.
    }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
)js";

const char kActScript[] = R"js(
function kestrelKeep(input) { sessionStorage.setItem(input.id, input.value); }
function kestrelRestore() {
  for (const id of ['kestrel-token', 'kestrel-author']) {
    const input = document.getElementById(id);
    if (input && sessionStorage.getItem(id) !== null) input.value = sessionStorage.getItem(id);
  }
}
// Posts `body` with the tab's token and author; `said` shows the outcome.
async function kestrelPost(path, body, said, done) {
  const headers = {'Content-Type': 'text/plain',
                   'X-Kestrel-Token': sessionStorage.getItem('kestrel-token') || ''};
  const author = sessionStorage.getItem('kestrel-author');
  if (author) headers['X-Kestrel-Author'] = author;
  try {
    const reply = await fetch(path, {method: 'POST', headers, body});
    const answer = await reply.json();
    said.textContent = reply.ok ? done(answer) : reply.status + ': ' + answer.error;
  } catch (error) {
    said.textContent = 'not sent: ' + error;
  }
}
function kestrelAct(button, verb, undo) {
  const box = button.closest('.act');
  const body = verb === 'note' ? box.querySelector('.act-text').value
             : verb === 'label' ? box.querySelector('.act-label').value : (undo || '');
  return kestrelPost('/api/nodes/' + box.dataset.node + '/' + verb, body, box.querySelector('.act-said'),
                     (answer) => 'recorded (' + answer.kind + ')');
}
function kestrelAnswer(button, verb) {
  const box = button.closest('.review-question');
  const body = verb === 'edit' ? box.querySelector('.review-text').value
             : verb === 'reject' ? box.querySelector('.review-reason').value : '';
  return kestrelPost('/api/reviews/' + box.dataset.question + '/' + verb, body, box.querySelector('.act-said'),
                     (answer) => 'answered (' + answer.state + ')');
}
document.addEventListener('DOMContentLoaded', kestrelRestore);
)js";

}  // namespace kestrel::report
