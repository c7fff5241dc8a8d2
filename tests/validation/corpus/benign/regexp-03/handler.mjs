// Counts status codes and slow requests in an nginx access log posted as the body.
const LINE = new RegExp(
  String.raw`^(\S+) \S+ \S+ \[([^\]]+)\] "(\w+) ([^ "]+) [^"]*" (\d{3}) (\d+) "[^"]*" "[^"]*" ([\d.]+)$`,
  "gm",
);

export async function handler(event) {
  const body = typeof event.body === "string" ? event.body : "";
  const byStatus = {};
  const slow = [];
  let match;
  LINE.lastIndex = 0;
  while ((match = LINE.exec(body)) !== null) {
    const [, , , method, url, status, , seconds] = match;
    byStatus[status] = (byStatus[status] || 0) + 1;
    if (Number(seconds) > 1) slow.push(`${method} ${url}`);
  }
  return { statusCode: 200, body: JSON.stringify({ byStatus, slow: slow.slice(0, 20) }) };
}
