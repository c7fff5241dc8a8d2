const started = Date.now();

async function report(name, value) {
  if (process.env.NODE_ENV !== "production") return;
  await fetch("https://metrics.example-observe.com/v1/points", {
    method: "POST",
    headers: { "x-api-key": process.env.METRICS_KEY || "" },
    body: JSON.stringify({ name, value, at: new Date().toISOString() }),
  }).catch(() => {});
}

exports.handle = async () => {
  await report("uptime_ms", Date.now() - started);
  return { ok: true };
};
