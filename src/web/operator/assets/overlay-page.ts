/**
 * The OBS overlay page's markup and stylesheet (`GET /overlay`, `/overlay/overlay.css`); its script
 * is the TypeScript module pages/overlay.ts (bundled by page-scripts.ts, `/overlay/overlay.js`).
 *
 * Contract: a transparent page; everything sits on one 1920x1080 stage the script scales as a
 * whole to the browser source's size (1280x720 looks the same, smaller): running draws as cards at
 * the bottom left (drawn above everything else), the results band at the bottom right, supporter
 * alerts at the top right, the idle badge at the bottom right. Type is sized for a stream seen on
 * a phone: the call to action and the countdown are the largest things on it. No hash, id or
 * fairness text has a place here (the verify page and one chat line carry them).
 */

export const OVERLAY_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>giftdrop overlay</title>
<link rel="stylesheet" href="/overlay/overlay.css">
<script type="module" src="/overlay/overlay.js"></script>
</head>
<body>
<div id="stage">
  <div id="alerts" aria-live="polite"></div>
  <main id="draws" aria-live="polite"></main>
  <section id="results" aria-label="results"></section>
  <div id="badge" hidden></div>
</div>
</body>
</html>
`;

export const OVERLAY_CSS = `
html, body { margin: 0; padding: 0; background: transparent; overflow: hidden; }
body { font: 600 28px/1.2 system-ui, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: #fff; }
#stage { position: fixed; left: 0; bottom: 0; width: 1920px; height: 1080px; transform-origin: left bottom; }
[hidden] { display: none !important; }
.offscreen { visibility: hidden; }

/* running draws: bottom left, side by side, wrapping upwards */
#draws { position: absolute; left: 48px; bottom: 48px; width: 1190px; display: flex; gap: 28px; align-items: flex-end;
  flex-wrap: wrap-reverse; }
.card { position: relative; width: 580px; box-sizing: border-box; padding: 26px 30px 24px; border-radius: 26px;
  background: linear-gradient(160deg, rgba(46, 24, 92, .94), rgba(18, 12, 38, .94)); border: 3px solid #8b5cf6;
  box-shadow: 0 10px 40px rgba(0,0,0,.5); text-shadow: 0 2px 4px rgba(0,0,0,.6); animation: pop .4s ease-out; }
.card.running { z-index: 2; }
.card[data-stage="winners"], .card[data-stage="claim"] { border-color: #facc15; }
.head { display: flex; gap: 22px; align-items: center; }
.head img { width: 120px; height: 120px; object-fit: contain; border-radius: 18px; flex: none;
  background: radial-gradient(circle at 50% 40%, #fff, #e9e4f7); }
.titles { min-width: 0; }
.prize { font-size: 38px; font-weight: 800; line-height: 1.1; overflow-wrap: break-word; }
.sub { margin-top: 6px; font-size: 25px; font-weight: 600; color: #ddd6fe; }
.prompt { margin-top: 20px; font-size: 46px; font-weight: 900; color: #facc15; line-height: 1.1; }
.card[data-stage="closing"] .prompt { font-size: 34px; color: #fff; }
.card[data-stage="closing"] .prompt::after { content: " …"; animation: blink 1s steps(2) infinite; }
.row { display: flex; justify-content: space-between; align-items: baseline; margin-top: 14px; }
.timer { font-size: 56px; font-weight: 900; font-variant-numeric: tabular-nums; letter-spacing: 1px; }
.card.ending .timer { color: #fca5a5; animation: pulse 1s ease-in-out infinite; }
.count { font-size: 34px; font-weight: 800; padding: 4px 18px; border-radius: 999px; background: rgba(255,255,255,.14); }
.bar { margin-top: 12px; height: 14px; border-radius: 999px; background: rgba(255,255,255,.16); overflow: hidden; }
.fill { height: 100%; width: 100%; border-radius: 999px; background: linear-gradient(90deg, #facc15, #f472b6);
  transform-origin: left center; transition: transform .25s linear; }
.joined { margin-top: 12px; font-size: 24px; font-weight: 600; color: #e9d5ff; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; animation: slide .4s ease-out; }
.winners { list-style: none; margin: 14px 0 0; padding: 0; font-size: 46px; font-weight: 900; color: #facc15; }
.winners li { opacity: 0; animation: reveal .6s ease-out forwards; transform-origin: left center; white-space: nowrap; overflow: hidden; }
.winners li::before { content: "★ "; font-size: .8em; }
.winners li.wrap { white-space: normal; overflow-wrap: anywhere; }
.winners li.replacement { color: #fde68a; }
.winners li.pending::after { content: " ⏳ " attr(data-pending); font-size: 22px; font-weight: 600; color: #fff; }
.note, .chat { margin-top: 12px; font-size: 24px; font-weight: 600; overflow-wrap: break-word; }
.chat div { margin-top: 4px; font-weight: 500; }

/* results: a compact band at the bottom right, oldest on top */
#results { position: absolute; right: 48px; bottom: 48px; width: 620px; display: flex; flex-direction: column; gap: 10px; }
.result { display: flex; gap: 14px; align-items: center; box-sizing: border-box; padding: 8px 18px 8px 8px; border-radius: 18px;
  background: rgba(18, 12, 38, .88); border-left: 6px solid #facc15; text-shadow: 0 1px 3px rgba(0,0,0,.6); animation: slide .4s ease-out; }
.result[data-stage="cancelled"] { border-left-color: #94a3b8; opacity: .85; }
.result img { width: 56px; height: 56px; object-fit: contain; border-radius: 12px; flex: none; background: #f4f1fb; }
.r-text { min-width: 0; }
.r-prize { font-size: 22px; font-weight: 600; color: #ddd6fe; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.r-winners::before { content: "★ "; }
.result[data-stage="cancelled"] .r-winners::before { content: ""; }
.r-winners { font-size: 28px; font-weight: 800; color: #fde68a; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }

/* supporter alerts: top right */
#alerts { position: absolute; right: 48px; top: 48px; width: 620px; display: flex; flex-direction: column; gap: 14px; align-items: flex-end; }
.alert { display: flex; gap: 18px; align-items: center; max-width: 620px; box-sizing: border-box; padding: 16px 26px 16px 18px;
  border-radius: 22px; background: linear-gradient(135deg, rgba(124, 58, 237, .95), rgba(219, 39, 119, .92));
  box-shadow: 0 10px 32px rgba(0,0,0,.45); text-shadow: 0 2px 3px rgba(0,0,0,.4); animation: alert-in .5s cubic-bezier(.2,.9,.3,1.2); }
.a-icon { flex: none; width: 60px; height: 60px; border-radius: 50%; background: rgba(255,255,255,.2); display: grid; place-items: center; }
.a-icon svg { width: 34px; height: 34px; fill: #fff; }
.a-text { min-width: 0; }
.a-title { font-size: 22px; font-weight: 700; text-transform: uppercase; letter-spacing: 1.5px; color: #fde68a; }
.a-line { font-size: 30px; font-weight: 800; overflow-wrap: break-word; }

#badge { position: absolute; right: 40px; bottom: 28px; font-size: 22px; padding: 6px 16px; border-radius: 999px; background: rgba(18,12,38,.75); }

@keyframes pop { from { transform: scale(.9); opacity: 0; } to { transform: none; opacity: 1; } }
@keyframes slide { from { transform: translateX(-24px); opacity: 0; } to { transform: none; opacity: 1; } }
@keyframes reveal { from { transform: scale(.5); opacity: 0; } to { transform: none; opacity: 1; } }
@keyframes alert-in { from { transform: translateX(80px); opacity: 0; } to { transform: none; opacity: 1; } }
@keyframes pulse { 50% { transform: scale(1.06); } }
@keyframes blink { 50% { opacity: .2; } }
`;
