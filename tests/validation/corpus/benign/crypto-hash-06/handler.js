const crypto = require("crypto");

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

exports.handler = async (event) => {
  const data = Buffer.from(event.file || "", "base64");
  const sha256 = crypto.createHash("sha256").update(data).digest("hex");
  return { sha256, empty: sha256 === EMPTY_SHA256, id: crypto.randomUUID() };
};
