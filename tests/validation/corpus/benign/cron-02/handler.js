exports.handler = async () => {
  const since = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
  const res = await fetch(`${process.env.METRICS_URL}?since=${encodeURIComponent(since)}`);
  const data = await res.json();
  const summary = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.reduce((a, b) => a + b, 0)]));
  console.log("daily summary", summary);
  return summary;
};
