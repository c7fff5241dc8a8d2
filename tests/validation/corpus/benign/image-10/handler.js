const Jimp = require("jimp");

const LOGO_URL = process.env.WATERMARK_URL || "https://cdn.example.com/brand/logo-white.png";
let logoPromise;

function logo() {
  logoPromise ??= Jimp.read(LOGO_URL);
  return logoPromise;
}

exports.handler = async (event) => {
  const photo = await Jimp.read(Buffer.from(event.image, "base64"));
  const mark = (await logo()).clone();
  mark.resize(Math.round(photo.bitmap.width / 5), Jimp.AUTO).opacity(0.6);

  const margin = Math.round(photo.bitmap.width * 0.02);
  photo.composite(mark, photo.bitmap.width - mark.bitmap.width - margin, photo.bitmap.height - mark.bitmap.height - margin, {
    mode: Jimp.BLEND_SOURCE_OVER,
  });
  if (event.caption) {
    const font = await Jimp.loadFont(Jimp.FONT_SANS_32_WHITE);
    photo.print(font, margin, margin, event.caption.slice(0, 80));
  }
  const out = await photo.quality(88).getBufferAsync(Jimp.MIME_JPEG);
  return { image: out.toString("base64"), width: photo.bitmap.width, height: photo.bitmap.height };
};
