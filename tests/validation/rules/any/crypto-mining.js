const cp = require("child_process");

function mine() {
  // ruleid: any-crypto-mining
  cp.spawn("/tmp/xmrig", ["-o", "stratum+tcp://pool.example.com:3333", "-u", "4AdU..."]);
  // ruleid: any-crypto-mining
  const pool = "pool.supportxmr.com:443";
  // ruleid: any-crypto-mining
  const args = ["--donate-level", "1", "--threads", "2"];
  // ruleid: any-crypto-mining
  const cfg = { "algo": "rx/0", url: "gulf.moneroocean.stream:10128" };
  // ruleid: any-crypto-mining
  const miner = new CoinHive.Anonymous("key");
  return [pool, args, cfg, miner];
}

function benign(text) {
  // ok: any-crypto-mining
  const topic = "data mining and text mining for customer reviews";
  // ok: any-crypto-mining
  const randomX = Math.random() * 10;
  // ok: any-crypto-mining
  const determiner = "the";
  // ok: any-crypto-mining
  const url = "tcp://db.internal:5432";
  return [topic, randomX, determiner, url, text];
}
