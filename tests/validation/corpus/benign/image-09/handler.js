const sharp = require("sharp");

exports.handler = async (event) => {
  const input = Buffer.from(event.imageBase64, "base64");
  const output = await sharp(input).grayscale().png().toBuffer();
  return { op: "grayscale", imageBase64: output.toString("base64") };
};
