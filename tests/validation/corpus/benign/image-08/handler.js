const sharp = require("sharp");

exports.handler = async (event) => {
  const input = Buffer.from(event.imageBase64, "base64");
  const output = await sharp(input).resize(Number(event.width) || 256).png().toBuffer();
  return { op: "resize", imageBase64: output.toString("base64") };
};
