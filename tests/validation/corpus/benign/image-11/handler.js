const sharp = require("sharp");

exports.handler = async (event) => {
  const input = Buffer.from(event.imageBase64, "base64");
  const output = await sharp(input).blur(Number(event.sigma) || 2).png().toBuffer();
  return { op: "blur", imageBase64: output.toString("base64") };
};
