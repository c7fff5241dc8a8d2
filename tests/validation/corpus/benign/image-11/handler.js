const sharp = require("sharp");
const { encode } = require("blurhash");

// Computes the BlurHash placeholder the gallery shows while the real photo loads.
exports.handler = async (event) => {
  const url = event.imageUrl;
  if (!/^https:\/\/images\.example\.com\//.test(url)) throw new Error("only our CDN is allowed");
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetch failed: ${res.status}`);
  const input = Buffer.from(await res.arrayBuffer());

  const { data, info } = await sharp(input)
    .raw()
    .ensureAlpha()
    .resize(32, 32, { fit: "inside" })
    .toBuffer({ resolveWithObject: true });
  const hash = encode(new Uint8ClampedArray(data), info.width, info.height, 4, 3);
  const { dominant } = await sharp(input).stats();
  return {
    blurhash: hash,
    dominantColor: `#${[dominant.r, dominant.g, dominant.b].map((c) => c.toString(16).padStart(2, "0")).join("")}`,
  };
};
