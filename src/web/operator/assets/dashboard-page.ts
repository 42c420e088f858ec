/**
 * The dashboard page's markup and stylesheet (`GET /dashboard`, `/dashboard/app.css`); its script
 * is the TypeScript module pages/dashboard.ts (bundled by page-scripts.ts, `/dashboard/app.js`),
 * which says what the page does.
 *
 * Contract: the markup holds no data and no credential (it loads without the token); the sign-in
 * form (#signin) names where the token is (`dashboardHtml(where)`: the token file's path or
 * GIFTDROP_DASHBOARD_TOKEN, never the token). No inline script or style (the CSP forbids them).
 * Laid out for a desktop and for a phone beside OBS: at 390 px wide nothing overflows sideways,
 * every control is on screen, the tables read as cards whenever their section is narrow (a phone,
 * or a third of a wide screen: a container query; each cell shows its column's name) and an id or
 * a time is never broken mid-token (ids are shortened with … instead).
 */

import { escapeHtml } from '../../../shared/html.js';

/** The page; `tokenWhere` (a file path or a setting's name, never the token) is named by the sign-in form. */
export function dashboardHtml(tokenWhere: string): string {
  return DASHBOARD_HTML.replace('{{TOKEN_WHERE}}', escapeHtml(tokenWhere));
}

const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>giftdrop dashboard</title>
<link rel="stylesheet" href="/dashboard/app.css">
<script type="module" src="/dashboard/app.js"></script>
</head>
<body>
<section id="signin" hidden>
  <h1>giftdrop dashboard</h1>
  <p>Sign in with the dashboard token. It is in <code id="token-where">{{TOKEN_WHERE}}</code>; the link the bot prints when it starts signs in by itself.</p>
  <p id="signin-problem" class="bad" role="alert" hidden></p>
  <form id="signin-form" class="actions">
    <label>token <input id="signin-token" type="password" autocomplete="off" spellcheck="false" required></label>
    <button id="signin-button" type="submit">Sign in</button>
  </form>
  <p class="muted">The token stays in this tab only (it is sent to this bot and nowhere else) and is forgotten when you close the tab or sign out.</p>
</section>
<div id="app" hidden>
<header>
  <h1>giftdrop</h1>
  <span id="status" class="pill"></span>
  <span id="streaming" class="pill">stream: ?</span>
  <button id="go-live" type="button" hidden>Mark stream live</button>
  <button id="go-offline" type="button" hidden>Mark stream offline</button>
  <a id="setup-link" href="/setup">Set up for your channel</a>
  <button id="logout" type="button">Sign out</button>
</header>
<div id="answer" role="status" hidden></div>
<div id="problems" role="alert" hidden></div>
<div id="reach" hidden></div>
<main>
<section>
  <h2>Open draws</h2>
  <div id="open"><p class="muted">No draw is open.</p></div>
  <div class="actions">
    <button id="end" type="button" hidden>End now and draw</button>
    <button id="cancel" type="button" hidden>Cancel link giveaway</button>
    <button id="retry" type="button" hidden>Retry links</button>
  </div>
  <div id="entrants-box" hidden>
  <h3>Entrants <span id="entrant-count" class="muted"></span></h3>
  <div class="actions"><select id="entrant-draw"></select><input id="entrant-search" type="search" placeholder="search entrants"></div>
  <div class="scroll"><table id="entrants"><thead><tr><th>name</th><th>login</th><th>tickets</th><th id="entrant-verdict">eligible</th></tr></thead><tbody></tbody></table></div>
  </div>
</section>
<section>
  <h2>Start a link giveaway</h2>
  <p id="start-busy" class="muted" hidden></p>
  <div id="products" class="products"></div>
  <form id="start-form" class="actions">
    <label>winners <input id="start-winners" type="number" min="1" value="1"></label>
    <label>seconds <input id="start-seconds" type="number" min="5" value="60"></label>
    <button id="start" type="submit">Start giveaway</button>
  </form>
</section>
<section>
  <h2>Prizes waiting <span id="prize-count" class="muted"></span></h2>
  <p class="muted">Winners whose prize is not redeemed yet. A whisper is never proof it arrived: a prize stays here until Fourthwall says it was redeemed, or that it can no longer be (cancelled, or changed to a promotion or a gift card).</p>
  <div class="scroll"><table id="prizes"><thead><tr><th>winner</th><th>prize</th><th>state</th><th>since</th><th>link</th><th></th></tr></thead><tbody></tbody></table></div>
</section>
<section>
  <h2>Recent winners</h2>
  <div id="recent"><p class="muted">No winners yet.</p></div>
  <h3>What the winners said</h3>
  <ul id="winner-chat" class="log"></ul>
</section>
<section>
  <h2>History</h2>
  <div class="actions">
    <input id="history-search" type="search" placeholder="filter: id, prize, winner">
    <select id="history-status"><option value="">any status</option><option>finished</option><option>cancelled</option><option>failed</option><option>open</option><option>drawing</option></select>
    <a id="csv" href="/dashboard/api/history.csv" download>Download CSV</a>
    <a id="json" href="/dashboard/api/history.json" download>Download JSON</a>
  </div>
  <div class="scroll"><table id="history"><thead><tr><th>closed</th><th>kind</th><th>prize</th><th>status</th><th>entrants</th><th>winners</th><th>verify</th></tr></thead><tbody></tbody></table></div>
</section>
<section>
  <h2>Bot's chat lines</h2>
  <ul id="transcript" class="log"></ul>
</section>
</main>
</div>
</body>
</html>
`;

export const DASHBOARD_CSS = `
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.45 system-ui, "Segoe UI", Roboto, sans-serif; background: #f6f5fb; color: #1c1633;
  overflow-wrap: break-word; word-break: normal; hyphens: manual; }
header { display: flex; gap: 8px 12px; align-items: center; padding: 12px 20px; background: #1c1633; color: #fff; flex-wrap: wrap; }
header h1 { margin: 0 8px 0 0; font-size: 22px; }
header a { color: #ddd6fe; }
.pill { padding: 2px 10px; border-radius: 999px; background: rgba(255,255,255,.15); max-width: 100%; }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(520px, 100%), 1fr)); gap: 16px; padding: 16px 20px; }
section { background: #fff; border-radius: 12px; padding: 12px 18px; box-shadow: 0 1px 4px rgba(0,0,0,.08); min-width: 0;
  container-type: inline-size; }
[hidden] { display: none !important; }
h2 { margin: 4px 0 10px; font-size: 18px; } h3 { font-size: 15px; margin: 14px 0 6px; }
button, select, input { font: inherit; padding: 6px 12px; border-radius: 8px; border: 1px solid #b9b3d6; background: #fff;
  max-width: 100%; min-height: 36px; }
button { background: #6d28d9; color: #fff; border: none; cursor: pointer; } button:hover { background: #5b21b6; }
button.small { padding: 3px 10px; font-size: 13px; min-height: 32px; } button.ghost { background: #ede9fe; color: #3b0764; }
button.confirm { background: #b91c1c; color: #fff; } button:disabled { opacity: .5; cursor: default; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
.actions label { display: inline-flex; gap: 6px; align-items: center; }
.actions input[type="number"] { width: 5.5em; }
.actions input[type="search"], .actions select { flex: 1 1 12em; min-width: 0; }
#signin { max-width: 560px; margin: 40px auto; padding: 0 16px; } #signin code { font: 13px ui-monospace, Menlo, monospace; overflow-wrap: anywhere; }
#signin .bad { background: #fee2e2; padding: 8px 14px; border-radius: 8px; }
#signin input { flex: 1 1 12em; min-width: 0; }
#answer { margin: 10px 20px 0; padding: 8px 14px; border-radius: 8px; background: #dcfce7; }
#answer.bad { background: #fee2e2; }
#problems { margin: 10px 20px 0; padding: 8px 14px; border-radius: 8px; background: #fee2e2; font-weight: 600; }
#reach { margin: 10px 20px 0; padding: 4px 14px; border-radius: 8px; background: #fef3c7; overflow-wrap: anywhere; } #reach p { margin: 6px 0; }
#reach summary { cursor: pointer; font-weight: 600; margin: 4px 0; }
.draw { border: 1px solid #e4e0f5; border-radius: 10px; padding: 8px 12px; margin-bottom: 8px; min-width: 0; }
.draw .title { font-weight: 700; } .muted { color: #6b6590; } .checked { color: #1f7a3a; } .nobody { font-weight: 600; margin: 4px 0; }
.winner { display: flex; gap: 6px 8px; align-items: center; flex-wrap: wrap; margin: 6px 0; min-width: 0; }
.link { font-family: ui-monospace, Menlo, monospace; font-size: 12px; background: #f3f0ff; padding: 2px 6px; border-radius: 6px; overflow-wrap: anywhere; min-width: 0; max-width: 100%; }
code.id { display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom;
  font: 12px ui-monospace, Menlo, monospace; }
.when { white-space: nowrap; }
.hex { font: 12px ui-monospace, Menlo, monospace; overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; font-size: 14px; } th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eee; vertical-align: top; }
td button { margin: 0 4px 4px 0; }
.status.failed { color: #b91c1c; font-weight: 600; }
.products { display: grid; grid-template-columns: repeat(auto-fill, minmax(110px, 1fr)); gap: 8px; }
.product { border: 2px solid #e4e0f5; border-radius: 10px; padding: 6px; cursor: pointer; text-align: center; background: #fff; color: inherit; min-width: 0; }
.product img { width: 100%; height: 80px; object-fit: contain; } .product.selected { border-color: #6d28d9; background: #f3f0ff; }
.product.out { opacity: .5; }
.log { list-style: none; padding: 0; margin: 0; max-height: 260px; overflow: auto; font-size: 14px; }
.log li { padding: 2px 0; border-bottom: 1px dotted #eee; }
details.set-aside summary { cursor: pointer; }

/* A phone beside OBS: one column, less padding. */
@media (max-width: 640px) {
  header { padding: 10px 12px; } header h1 { font-size: 20px; }
  main { padding: 10px 8px; gap: 10px; } section { padding: 10px 12px; }
  #answer, #problems, #reach { margin: 8px 8px 0; }
}
/* A narrow section (a phone, or a third of a wide screen): the tables as cards, each cell named by its column. */
@container (max-width: 620px) {
  table, thead, tbody, tr, th, td { display: block; width: 100%; }
  thead { display: none; }
  tr { border: 1px solid #e4e0f5; border-radius: 10px; padding: 6px 10px; margin-bottom: 8px; background: #fff; }
  td { border: none; padding: 2px 0; display: flex; gap: 8px; flex-wrap: wrap; align-items: baseline; min-width: 0; }
  td[data-label]:not([data-label=""])::before { content: attr(data-label); flex: 0 0 6.5em; color: #6b6590; font-size: 12px; }
  td > * { min-width: 0; }
  /* entrants: one compact line each (name, login, tickets, verdict) */
  #entrants tr { display: flex; flex-wrap: wrap; gap: 2px 10px; padding: 4px 10px; margin-bottom: 4px; }
  #entrants td { display: inline; width: auto; padding: 0; }
  #entrants td::before { content: none !important; }
  #entrants td[data-label="login"], #entrants td[data-label="tickets"] { color: #6b6590; }
}
#entrants-box .scroll { max-height: 360px; overflow-y: auto; }
`;
