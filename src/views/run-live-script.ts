/**
 * The run page's one script: it follows the run's event stream and shows each step,
 * the model's text as it streams, and the status, without a reload. It builds DOM
 * nodes with textContent only (every value is untrusted). The page-headers CSP
 * admits exactly this text, by hash; without JS the page is static and complete.
 */
export const RUN_LIVE_SCRIPT = `(function () {
  var root = document.getElementById("live");
  if (!root || !window.EventSource) return;
  var list = document.getElementById("activity");
  var streaming = document.getElementById("streaming");
  var badge = document.getElementById("run-status");
  var current = null;
  root.hidden = false;
  function line(kind, text) {
    var li = document.createElement("li");
    var tag = document.createElement("code");
    tag.textContent = kind;
    li.appendChild(tag);
    li.appendChild(document.createTextNode(" " + text));
    list.appendChild(li);
  }
  function status(s) {
    badge.textContent = s.replace(/_/g, " ");
    badge.className = "badge " + s;
  }
  var es = new EventSource(root.getAttribute("data-events"));
  es.addEventListener("open", function () { current = null; streaming.textContent = ""; });
  es.addEventListener("model_delta", function (e) {
    var d = JSON.parse(e.data);
    if (d.stream !== current) { current = d.stream; streaming.textContent = ""; }
    streaming.textContent += d.text;
  });
  es.addEventListener("turn", function (e) {
    var d = JSON.parse(e.data);
    current = null;
    streaming.textContent = "";
    var calls = (d.tool_calls || []).map(function (c) { return c.name; }).join(", ");
    var whole = d.stream_refused ? " (no live text: the provider refused to stream)" : "";
    line(d.path + " turn " + d.turn, (d.text || "") + (calls ? " → calls " + calls : "") + whole);
  });
  es.addEventListener("tool", function (e) {
    var d = JSON.parse(e.data);
    line(d.path, d.ok ? "returned " + d.result : "failed: " + JSON.stringify(d.error));
  });
  es.addEventListener("approval_requested", function (e) {
    var d = JSON.parse(e.data);
    line("approval", "asked for " + d.tool);
  });
  es.addEventListener("approval_decided", function (e) {
    var d = JSON.parse(e.data);
    line("approval", (d.responded ? "answered in place of the call" : d.approved ? (d.edited ? "approved with edited arguments" : "approved") : "rejected") + " by " + d.by);
  });
  ["queued", "running", "awaiting_approval", "waiting", "succeeded", "failed", "cancelled"].forEach(function (s) {
    es.addEventListener("run_" + s, function (e) {
      status(s);
      if (s === "failed") line("error", JSON.parse(e.data).error.message);
      if (s === "succeeded" || s === "failed" || s === "cancelled") { es.close(); line("done", "the run " + s + "; reload for the full call tree"); }
    });
  });
  // Sent once the run has ended and every event is out: nothing more will come, so no reconnect.
  es.addEventListener("end", function () { es.close(); });
})();`;
