const routes = {
  "GET /ping": async () => ({ pong: true }),
  "POST /sum": async (body) => ({ sum: (body.values || []).reduce((a, b) => a + b, 0) }),
};

exports.handler = async (event) => {
  const route = routes[`${event.httpMethod} ${event.path}`];
  if (!route) return { statusCode: 404 };
  return { statusCode: 200, body: JSON.stringify(await route(JSON.parse(event.body || "{}"))) };
};
