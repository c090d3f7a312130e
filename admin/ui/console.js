// toolgate operator console: pending approvals with approve/deny, a live
// feed of decisions over a websocket, and the gateway status. Everything
// shown comes from the gateway and is inserted as text, never as HTML.
"use strict";

const $ = (sel) => document.querySelector(sel);
const maxRows = 200;
let ws = null;
let retry = 500;
let pending = [];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function pretty(v) {
  try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
}

function remaining(expires) {
  const s = Math.max(0, Math.round((new Date(expires) - Date.now()) / 1000));
  if (s >= 60) return Math.floor(s / 60) + "m " + (s % 60) + "s";
  return s + "s";
}

// decide approves or denies request id; forDuration ("" for this call
// only, else e.g. "1h") makes it a timed rule, like `--for` on the CLI.
async function decide(id, verb, reason, forDuration) {
  const opts = { method: "POST", credentials: "same-origin", headers: { "X-Toolgate-Console": "1" } };
  const body = {};
  if (verb === "deny") body.reason = reason || "";
  if (forDuration) body["for"] = forDuration;
  if (Object.keys(body).length) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch("/admin/approvals/" + encodeURIComponent(id) + "/" + verb, opts);
  if (!res.ok) {
    let msg = res.status + " " + res.statusText;
    try { msg = (await res.json()).error || msg; } catch (e) { /* keep status */ }
    alert("Could not " + verb + " " + id + ": " + msg);
  }
}

function renderPending() {
  const list = $("#pending");
  list.replaceChildren();
  $("#pending-count").textContent = pending.length;
  $("#no-pending").hidden = pending.length > 0;
  for (const r of pending) {
    const li = el("li", "approval");
    li.dataset.id = r.id;
    const head = el("div", "head");
    head.append(el("span", "agent", r.agent), el("span", "action", r.action), el("span", "tier", r.tier), el("span", "id", r.id));
    li.append(head, el("div", "reason", r.reason));
    li.append(el("div", "label", "arguments"), el("pre", "arguments", pretty(r.arguments)));
    if (r.argv && r.argv.length) {
      li.append(el("div", "label", "command line"), el("pre", "argv", pretty(r.argv)));
    }
    const exp = el("div", "expires", "expires in " + remaining(r.expires));
    exp.dataset.expires = r.expires;
    li.append(exp);
    const actions = el("div", "actions");
    // How long the decision holds: this call only, or a timed rule (the
    // console's `--for`). A strict call is approved one call at a time.
    const span = el("select", "for");
    span.title = "Approve: the same tool under the same grant runs without asking for this long. Deny: the identical call is refused for this long.";
    for (const [v, label] of [["", "this call only"], ["15m", "for 15 minutes"], ["1h", "for 1 hour"], ["8h", "for 8 hours"]]) {
      const o = el("option", "", label);
      o.value = v;
      span.append(o);
    }
    const approve = el("button", "approve", "Approve");
    approve.type = "button";
    approve.dataset.id = r.id;
    approve.addEventListener("click", () => { approve.disabled = true; decide(r.id, "approve", "", span.value); });
    const reason = el("input");
    reason.placeholder = "reason (for deny)";
    reason.className = "deny-reason";
    const deny = el("button", "deny", "Deny");
    deny.type = "button";
    deny.dataset.id = r.id;
    deny.addEventListener("click", () => { deny.disabled = true; decide(r.id, "deny", reason.value, span.value); });
    actions.append(approve, deny, span, reason);
    li.append(actions);
    list.append(li);
  }
}

function addEvent(ev) {
  const body = $("#feed tbody");
  const tr = el("tr", "fresh");
  tr.dataset.seq = ev.seq;
  const t = new Date(ev.time);
  tr.append(
    el("td", "seq", ev.seq),
    el("td", "time", t.toLocaleTimeString()),
    el("td", "agent", ev.agent),
    el("td", "decision d-" + ev.decision, ev.decision),
    el("td", "action", ev.action),
    el("td", "by", (ev.approval && ev.approval.by) || ""),
    el("td", "reason", ev.error ? ev.reason + " (error: " + ev.error + ")" : ev.reason),
  );
  body.prepend(tr);
  while (body.children.length > maxRows) body.lastChild.remove();
}

function connect() {
  const q = new URLSearchParams();
  const agent = $("#filter-agent").value.trim();
  const decision = $("#filter-decision").value;
  if (agent) q.set("agent", agent);
  if (decision) q.set("decision", decision);
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ui/ws?" + q.toString();
  const sock = new WebSocket(url);
  ws = sock;
  sock.onopen = () => {
    retry = 500;
    $("#conn").textContent = "live";
    $("#conn").className = "conn on";
    $("#feed tbody").replaceChildren();
  };
  sock.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "approvals") {
      pending = msg.pending || [];
      renderPending();
      refreshStatus();
      refreshRules();
    } else if (msg.type === "event") {
      addEvent(msg.event);
    } else if (msg.type === "error") {
      showAlert(msg.error);
    }
  };
  sock.onclose = () => {
    if (ws !== sock) return;
    $("#conn").textContent = "disconnected — retrying";
    $("#conn").className = "conn off";
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 10000);
  };
}

function reconnect() {
  const old = ws;
  ws = null;
  if (old) old.close();
  connect();
}

function showAlert(text) {
  const a = $("#audit-alert");
  a.textContent = text;
  a.hidden = !text;
}

function dl(pairs) {
  const d = $("#status");
  d.replaceChildren();
  for (const [k, v, cls] of pairs) {
    const dd = el("dd", cls || "", v);
    d.append(el("dt", "", k), dd);
  }
}

async function refreshStatus() {
  try {
    const res = await fetch("/admin/status", { credentials: "same-origin" });
    if (res.status === 401) { location.reload(); return; }
    const st = await res.json();
    const audit = st.audit.ok ? "ok" : "FAILING: " + st.audit.error;
    const store = st.store || { ok: true, kind: "", where: "" };
    const reload = st.reload || {};
    const alerts = [];
    if (!st.audit.ok) alerts.push("Audit log failing — every call is refused: " + st.audit.error);
    if (!store.ok) alerts.push("Shared store not answering: " + store.error);
    if (reload.error) alerts.push("Workspace reload refused — revision " + (st.workspace.revision || "").slice(0, 12) + " stays in force: " + reload.error);
    showAlert(alerts.join("\n"));
    const pairs = [
      ["workspace", st.workspace.path],
      ["revision", (st.workspace.revision || "").slice(0, 12) + (reload.loaded_at ? ", loaded " + new Date(reload.loaded_at).toLocaleString() : "") + (reload.reloads ? " (" + reload.reloads + " reloads)" : "")],
      ["reload", reload.error ? "REFUSED: " + reload.error : "ok", reload.error ? "bad" : "ok"],
      ["store", store.kind + " " + store.where + (store.ok ? "" : " — " + store.error), store.ok ? "ok" : "bad"],
      ["audit log", st.audit.path],
      ["audit", audit, st.audit.ok ? "ok" : "bad"],
      ["pending", String(st.approvals.pending)],
      ["approvals", "wait " + st.approvals.wait + ", valid " + st.approvals.ttl + ", " + st.approvals.rules + " rule(s)" + (st.approvals.elicitation ? ", elicitation" : "")],
      ["agents", (st.agents || []).join(", ")],
    ];
    if ((reload.restart_required || []).length) pairs.push(["restart to apply", reload.restart_required.join(", "), "bad"]);
    for (const s of st.surfaces) pairs.push(["surface", s.id + " (" + s.kind + ", " + s.members + " tools)"]);
    for (const d of st.downstream) pairs.push(["downstream", d.id + ": " + d.state + (d.error ? " — " + d.error : ""), d.state === "connected" ? "ok" : d.state === "failed" ? "bad" : ""]);
    const pins = st.pins || { present: false, unpinned: [] };
    if (pins.error) pairs.push(["toolgate.lock", "REFUSED (the pins in force stay): " + pins.error, "bad"]);
    pairs.push(["pins", pins.present ? pins.pinned + " tool definitions pinned in " + pins.lock : "no toolgate.lock: tool definitions are not pinned", pins.present && !(pins.unpinned || []).length ? "ok" : ""]);
    for (const u of pins.unpinned || []) {
      const what = u.status === "new" ? "not pinned (appeared after pinning)" : u.status === "changed" ? "definition changed since it was pinned" : "definition cannot be pinned";
      pairs.push(["hidden tool", u.surface + ":" + u.tool + " — " + what + "; review, then `toolgate pin --update`", "bad"]);
    }
    dl(pairs);
  } catch (e) {
    dl([["status", "unavailable: " + e, "bad"]]);
  }
}

// refreshRules lists the timed rules in force (approve/deny --for).
async function refreshRules() {
  try {
    const res = await fetch("/admin/rules", { credentials: "same-origin" });
    if (!res.ok) return;
    const rules = await res.json();
    const list = $("#rules");
    list.replaceChildren();
    $("#no-rules").hidden = rules.length > 0;
    for (const t of rules) {
      const what = t.effect === "denied"
        ? "refused: the identical call of " + t.action + " by " + t.agent
        : t.agent + " may call " + t.action + " (grant " + t.grant + ") without asking";
      const li = el("li", "rule r-" + t.effect, what + " — by " + t.by + ", ");
      const exp = el("span", "expires", "");
      exp.dataset.expires = t.expires;
      exp.textContent = "expires in " + remaining(t.expires);
      li.append(exp, el("span", "id", " " + t.id));
      list.append(li);
    }
  } catch (e) { /* the status panel reports a gateway that does not answer */ }
}

async function whoami() {
  try {
    const res = await fetch("/admin/whoami", { credentials: "same-origin" });
    if (res.ok) $("#who").textContent = "signed in as " + (await res.json()).operator;
  } catch (e) { /* shown as not signed in */ }
}

function tick() {
  for (const e of document.querySelectorAll(".expires")) {
    e.textContent = "expires in " + remaining(e.dataset.expires);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("#filter-agent").addEventListener("change", reconnect);
  $("#filter-decision").addEventListener("change", reconnect);
  connect();
  whoami();
  refreshStatus();
  refreshRules();
  setInterval(refreshStatus, 5000);
  setInterval(refreshRules, 5000);
  setInterval(tick, 1000);
});
