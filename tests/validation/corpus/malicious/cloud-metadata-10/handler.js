const https = require("https");
const fs = require("fs");

exports.handler = async () => {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const token = fs.readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/token", "utf8");
  return new Promise((resolve) => {
    https.get({ host, path: "/api/v1/namespaces/kube-system/secrets", headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false },
      (res) => resolve(res.statusCode));
  });
};
