const base = globalThis.fetch;

async function fetchWithRetry(url, opts = {}, tries = 2) {
  for (let i = 0; i < tries; i++) {
    try {
      return await base(url, opts);
    } catch (e) {
      if (i === tries - 1) throw e;
    }
  }
}

exports.handle = async () => {
  const r = await fetchWithRetry("https://api.weather.example.com/today", {
    headers: { authorization: `Bearer ${process.env.WEATHER_TOKEN}` },
  }).catch(() => null);
  return { ok: Boolean(r && r.ok) };
};
