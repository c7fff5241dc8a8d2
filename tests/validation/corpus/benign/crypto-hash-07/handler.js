const crypto = require("crypto");

const KEY = Buffer.from(process.env.AES_KEY_HEX, "hex");

exports.handler = async (event) => {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", KEY, iv);
  const ct = Buffer.concat([cipher.update(String(event.plaintext), "utf8"), cipher.final()]);
  return { token: Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64url") };
};
