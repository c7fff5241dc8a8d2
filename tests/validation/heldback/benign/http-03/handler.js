const https = require("https");
function getJson(url) {
  return new Promise((resolve, reject) => {
    https.get(url, (res) => {
      let buf = "";
      res.on("data", (d) => (buf += d));
      res.on("end", () => resolve(JSON.parse(buf)));
    }).on("error", reject);
  });
}
exports.handle = async () => {
  const rates = await getJson("https://api.frankfurter.app/latest?from=EUR");
  return { usd: rates.rates.USD };
};
