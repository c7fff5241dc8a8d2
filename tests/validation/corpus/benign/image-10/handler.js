const sharp = require("sharp");

exports.handler = async (event) => {
  const input = Buffer.from(event.imageBase64, "base64");
  const output = await sharp(input).rotate(Number(event.degrees) || 90).png().toBuffer();
  return { op: "rotate", imageBase64: output.toString("base64") };
};
