// Headlines from a news page (a declared host), extracted with a regular expression.
exports.handle = async (event) => {
  const limit = Math.min(20, Number((event.query && event.query.limit) || 5));
  let html;
  try {
    const res = await fetch("https://www.bbc.co.uk/news", { headers: { "user-agent": "headline-bot/0.3" } });
    html = await res.text();
  } catch (err) {
    return { statusCode: 502, body: { error: String(err) } };
  }
  const titles = [...html.matchAll(/<h[23][^>]*>([^<]{10,200})<\/h[23]>/g)].map((m) => m[1].trim());
  return { headlines: [...new Set(titles)].slice(0, limit) };
};
