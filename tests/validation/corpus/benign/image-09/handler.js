const sharp = require("sharp");

const MAX_INPUT_BYTES = 8 * 1024 * 1024;

exports.handler = async (event) => {
  const input = Buffer.from(event.body || "", event.isBase64Encoded ? "base64" : "utf8");
  if (input.length === 0 || input.length > MAX_INPUT_BYTES) {
    return { statusCode: 413, body: "image must be between 1 byte and 8 MiB" };
  }
  let meta;
  try {
    meta = await sharp(input).metadata();
  } catch {
    return { statusCode: 415, body: "unsupported image" };
  }
  if (meta.width < 64 || meta.height < 64) return { statusCode: 422, body: "avatar must be at least 64x64" };

  const size = Math.min(Number(event.queryStringParameters?.size) || 256, 1024);
  const avatar = await sharp(input, { failOn: "truncated" })
    .rotate()
    .resize(size, size, { fit: "cover", position: sharp.strategy.attention })
    .jpeg({ quality: 85, mozjpeg: true })
    .toBuffer();
  return {
    statusCode: 200,
    headers: { "content-type": "image/jpeg", "x-original-size": `${meta.width}x${meta.height}` },
    isBase64Encoded: true,
    body: avatar.toString("base64"),
  };
};
