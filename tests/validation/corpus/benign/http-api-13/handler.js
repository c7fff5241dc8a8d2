const https = require("https");

function postJson(url, body, token) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` } }, (res) => {
      let data = "";
      res.on("data", (c) => (data += c));
      res.on("end", () => resolve({ status: res.statusCode, body: data }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

exports.handler = async (event) => {
  const res = await postJson("https://slack.com/api/chat.postMessage", { channel: event.channel, text: event.text }, process.env.SLACK_BOT_TOKEN);
  return JSON.parse(res.body);
};
