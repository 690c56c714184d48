/**
 * The dashboard's one stylesheet, served by the package itself at /ui/assets/style.css (docs/reference.md#dashboard: no
 * CDN, nothing fetched, works offline). Plain CSS with no build step; the Content-Security-Policy allows styles
 * from this origin only, so no page carries a style attribute.
 */
export const STYLESHEET = `
:root { --ink: #1d2430; --muted: #566173; --line: #d5dae1; --bg: #f5f7fa; --card: #fff; --accent: #1f5fbf; --bad: #a4161a; --warn: #8a5300; --ok: #1b6b34; color-scheme: light; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid #f2b705; outline-offset: 1px; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem 1rem; padding: .5rem 1rem; background: #17202e; color: #fff; }
.top a { color: #fff; text-decoration: none; }
.brand { font-weight: 700; margin-right: .5rem; }
.top nav ul { display: flex; flex-wrap: wrap; gap: .1rem .25rem; list-style: none; margin: 0; padding: 0; }
.top nav a { display: block; padding: .35rem .5rem; border-radius: 4px; }
.top nav a:hover, .top nav a[aria-current="page"] { background: #2f3d55; }
.top form { margin-left: auto; }
.top .who { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem .6rem; }
.top .who .muted { color: #c9d1dd; }
.top button { background: transparent; color: #fff; border: 1px solid #8793a6; }
main { padding: 1rem; max-width: 1280px; margin: 0 auto; }
h1 { font-size: 1.45rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
footer { color: var(--muted); font-size: .85rem; padding: 1rem; text-align: center; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin-bottom: 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(290px, 1fr)); }
.grid > .card { margin-bottom: 0; }
.charts { grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); }
.card > h2:first-child { margin-top: 0; }
.scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; margin-bottom: 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
tbody th { font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
/* Body text breaks a long unbroken string (a URL, a token) anywhere rather than widen the page; in a table that lets
   a cell of one give up its width, so a row's label, a figure and a button keep theirs and the column of the string
   narrows. */
tbody th, .num, button, .button { overflow-wrap: normal; }
tr:last-child > td, tr:last-child > th { border-bottom: 0; }
.nowrap { white-space: nowrap; }
pre { background: #0f1722; color: #e8edf4; padding: .75rem; border-radius: 6px; overflow: auto; max-height: 24rem; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: .85rem; }
.form-fields { display: grid; gap: .75rem 1rem; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); margin-bottom: 1rem; }
.form-fields .problem, .form-fields .muted { font-size: .85rem; margin-top: .15rem; }
form.filters { display: grid; gap: .5rem .75rem; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); align-items: end; }
label { display: block; font-size: .85rem; font-weight: 600; color: var(--muted); }
.check { display: flex; align-items: center; gap: .4rem; min-height: 2.2rem; }
.check input { width: auto; margin: 0; }
input, select, textarea { display: block; width: 100%; margin-top: .15rem; font: inherit; padding: .35rem .45rem; border: 1px solid #8d97a5; border-radius: 4px; background: #fff; color: var(--ink); }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; min-height: 7rem; }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .4rem .8rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; }
.actions form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0; }
.inline { display: inline; margin: 0; }
.note { padding: .6rem .8rem; border-radius: 6px; margin-bottom: 1rem; border: 1px solid; }
.note.ok { background: #e7f4ea; border-color: #9fcfac; color: var(--ok); }
.note.error { background: #fbe9e9; border-color: #e3a5a5; color: var(--bad); }
.note.info { background: #eaf1fb; border-color: #a8c3ea; color: #174a94; }
.muted { color: var(--muted); }
.tag { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .8rem; font-weight: 600; border: 1px solid; white-space: nowrap; }
.tag.bad { color: var(--bad); border-color: #e3a5a5; background: #fbe9e9; }
.tag.warn { color: var(--warn); border-color: #e6c48f; background: #fdf3e3; }
.tag.ok { color: var(--ok); border-color: #9fcfac; background: #e7f4ea; }
.tag.plain { color: var(--muted); border-color: var(--line); background: #f3f5f8; }
.problem { color: var(--bad); font-size: .9rem; }
.stats { display: grid; gap: .5rem; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); margin: 0; }
.stats div { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; }
.stats dt { font-size: .8rem; color: var(--muted); font-weight: 600; }
.stats dd { margin: 0; font-size: 1.35rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.stats dd.small { font-size: 1rem; font-weight: 600; }
.stats dd.small time { white-space: normal; }
figure { margin: 0; }
figcaption { font-weight: 600; margin-bottom: .35rem; }
svg.chart { display: block; width: 100%; max-width: 460px; height: auto; }
svg.chart text { font: 12px system-ui, sans-serif; fill: #1d2430; }
svg.chart .track { fill: #eef1f5; }
.pager { display: flex; gap: 1rem; margin: .5rem 0 1.5rem; }
/* The open incidents, under the menu of every page: words first (how many, which), the colour only repeats them. */
.banner { border-bottom: 1px solid; padding: .5rem 0; }
.banner p { max-width: 1280px; margin: 0 auto; padding: 0 1rem; }
.banner.open { background: #fbe9e9; border-color: #e3a5a5; color: var(--bad); }
.banner.acknowledged, .banner.unread { background: #fdf3e3; border-color: #e6c48f; color: var(--warn); }
.banner a { color: inherit; font-weight: 600; }
.banner-mark { display: inline-block; width: 1.2rem; height: 1.2rem; line-height: 1.2rem; margin-right: .45rem; border-radius: 50%; background: var(--warn); color: #fff; text-align: center; font-weight: 700; }
.banner.open .banner-mark { background: var(--bad); }
.incident h3 { margin-top: 0; }
.incident details summary { cursor: pointer; font-weight: 600; margin: .25rem 0 .5rem; }
.incident .scroll { margin-bottom: 0; }
dl.facts { display: grid; gap: .4rem 1rem; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); margin: 0 0 .75rem; }
dl.facts dt { font-size: .8rem; color: var(--muted); font-weight: 600; }
dl.facts dd { margin: 0; }
dl.facts .wide { grid-column: span 2; }
dl.facts dd.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
.login { max-width: 380px; margin: 10vh auto; }
.login form > * + * { margin-top: .75rem; }
.login > .card h2 { margin-top: 0; }
td form.inline { display: flex; flex-wrap: wrap; gap: .35rem; align-items: center; margin: .2rem 0; }
td form.inline input, td form.inline select { width: auto; margin: 0; }
ul.tokens { list-style: none; margin: 0 0 .35rem; padding: 0; }
ul.tokens li + li { margin-top: .35rem; }
.shown input { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 600px) {
  body { font-size: 14px; }
  main { padding: .6rem; }
  .top { padding: .4rem .6rem; }
  .banner { padding: .45rem .6rem; }
  .banner p { padding: 0; }
  dl.facts { grid-template-columns: 1fr 1fr; }
  .top nav { order: 3; flex-basis: 100%; }
  /* Seven items are wider than a phone: two even rows, not one row and an orphan. */
  .top nav ul { display: grid; grid-template-columns: repeat(4, auto); justify-content: start; gap: 0 .5rem; }
  /* An admin's nine: two rows of five and four. */
  .top nav ul:has(li:nth-child(9)) { grid-template-columns: repeat(5, auto); gap: 0 .2rem; }
  /* Who is signed in takes a row of its own under the name, the button at its end. */
  .top .who { flex: 1 1 100%; justify-content: space-between; margin-left: 0; }
  .top nav a { padding: .25rem .22rem; font-size: .9rem; }
  .charts { grid-template-columns: 1fr; }
  .req { display: block; font-size: .8rem; }
  /* A table of many columns reads as one card a row: each cell with its column's name before it. */
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards tr { display: block; padding: .35rem 0; border-bottom: 1px solid var(--line); }
  table.cards tr:last-child { border-bottom: 0; }
  table.cards td, table.cards tbody th { display: flex; gap: .5rem; border: 0; padding: .15rem .6rem; text-align: left; }
  table.cards td:empty { display: none; }
  table.cards td > *, table.cards th > * { min-width: 0; }
  /* A card has no column for a row's label to keep its width from: it breaks like the rest. */
  table.cards tbody th { overflow-wrap: anywhere; }
  table.cards .nowrap { white-space: normal; overflow-wrap: anywhere; }
  table.cards td::before, table.cards tbody th::before { content: attr(data-label); flex: 0 0 6.5rem; font-weight: 600; color: var(--muted); }
  th, td { padding: .35rem .45rem; }
  h1 { font-size: 1.25rem; }
}
`;
