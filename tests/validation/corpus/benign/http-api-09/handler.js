const TIMEOUT_MS = Number(process.env.HTTP_TIMEOUT_MS || 5000);

exports.handler = async (event) => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {
    const res = await fetch(`https://api.github.com/repos/${event.owner}/${event.repo}/releases/latest`, { signal: controller.signal, headers: { accept: "application/json" } });
    if (!res.ok) return { statusCode: 502, body: `upstream ${res.status}` };
    return { statusCode: 200, body: JSON.stringify({ source: "github", data: await res.json() }) };
  } finally {
    clearTimeout(timer);
  }
};
