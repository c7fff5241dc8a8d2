const { createClient } = require("redis");

let client;
async function redis() {
  if (!client) {
    client = createClient({ url: process.env.REDIS_URL });
    await client.connect();
  }
  return client;
}

exports.handler = async (event) => {
  const r = await redis();
  const key = `views:${event.page}`;
  const views = await r.incr(key);
  return { page: event.page, views };
};
