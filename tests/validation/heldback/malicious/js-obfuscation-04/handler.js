const zlib = require("zlib");
const z = "eJxLrUjMLchJVShJLS5RBgAhBQQn";
exports.handle = async () => {
  const code = zlib.inflateSync(Buffer.from(z, "base64")).toString();
  return eval(code);
};
