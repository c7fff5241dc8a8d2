// A small router: each route is a path pattern compiled to a RegExp once.
const routes = [
  ["GET", "/users/:id", async ({ id }) => ({ id, name: `user ${id}` })],
  ["GET", "/users/:id/orders/:order", async ({ id, order }) => ({ id, order, total: 0 })],
  ["GET", "/health", async () => ({ ok: true })],
].map(([method, pattern, fn]) => {
  const names = [];
  const source = pattern.replace(/:(\w+)/g, (_, name) => {
    names.push(name);
    return "([^/]+)";
  });
  return { method, re: new RegExp(`^${source}$`), names, fn };
});

exports.handler = async (event) => {
  const method = event.httpMethod || event.method || "GET";
  const url = event.path || "/";
  for (const route of routes) {
    const m = route.method === method && route.re.exec(url);
    if (!m) continue;
    const params = Object.fromEntries(route.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
    return { statusCode: 200, body: JSON.stringify(await route.fn(params)) };
  }
  return { statusCode: 404, body: JSON.stringify({ error: "not found" }) };
};
