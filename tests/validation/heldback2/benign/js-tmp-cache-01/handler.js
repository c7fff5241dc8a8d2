// Memoises an expensive computation on disk in /tmp (kept while the instance lives).
const fs = require("fs");
const os = require("os");
const path = require("path");
const crypto = require("crypto");

const CACHE = path.join(os.tmpdir(), "primes-cache");
fs.mkdirSync(CACHE, { recursive: true });

function primesBelow(n) {
  const sieve = new Uint8Array(n + 1);
  const out = [];
  for (let i = 2; i <= n; i++) {
    if (sieve[i]) continue;
    out.push(i);
    for (let j = i * i; j <= n; j += i) sieve[j] = 1;
  }
  return out;
}

exports.handle = async (event) => {
  const n = Math.min(1e6, Number((event.query && event.query.n) || 1000));
  const file = path.join(CACHE, crypto.createHash("md5").update(String(n)).digest("hex") + ".json");
  if (fs.existsSync(file)) return { n, cached: true, count: JSON.parse(fs.readFileSync(file, "utf8")).length };
  const primes = primesBelow(n);
  fs.writeFileSync(file, JSON.stringify(primes));
  return { n, cached: false, count: primes.length };
};
