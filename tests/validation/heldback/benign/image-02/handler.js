const sharp = require("sharp");
exports.handle = async (event) => {
  const input = Buffer.from(event.body.image, "base64");
  const out = await sharp(input).resize(800, 600, { fit: "inside" }).webp({ quality: 80 }).toBuffer();
  return { headers: { "content-type": "image/webp" }, statusCode: 200, body: out.toString("base64") };
};
